extension String {
    /// The text with every C0 and C1 control character but tab and newline — ESC, BEL, CR, DEL, U+0080…U+009F —
    /// written as a visible `\x1B`-style escape, so that text from a sender (a push's title, a log line's value) reaches
    /// a terminal or a desktop as text and can neither retitle a window nor erase and rewrite a line.
    ///
    /// The text itself when it has none (no copy).
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: \.isEscapedControl) else { return self }
        var escaped = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            guard scalar.isEscapedControl else {
                escaped.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            for character in (hex.count < 2 ? "\\x0" : "\\x") + hex { escaped.append(contentsOf: character.unicodeScalars) }
        }
        return String(escaped)
    }
}

extension Unicode.Scalar {
    /// A C0 control other than tab and newline, DEL, or a C1 control.
    fileprivate var isEscapedControl: Bool {
        switch value {
        case 0x09, 0x0A: false
        case 0x00...0x1F, 0x7F...0x9F: true
        default: false
        }
    }
}
