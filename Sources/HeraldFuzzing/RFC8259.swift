/// A recogniser written straight from RFC 8259's grammar, the reference the payload target compares the gateway's
/// check against: whether bytes are one JSON object with optional whitespace around it. Iterative, so no input
/// nests it out of stack.
enum RFC8259 {
    /// Whether `bytes` are UTF-8 text holding exactly one JSON object.
    static func isObject(_ bytes: [UInt8]) -> Bool {
        guard String(validating: bytes, as: UTF8.self) != nil else { return false }
        var reader = Reader(bytes: bytes)
        return reader.object()
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        enum State { case value, key, afterValue }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func whitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            position += 1
            return true
        }

        mutating func object() -> Bool {
            whitespace()
            guard current == UInt8(ascii: "{") else { return false }
            var open: [UInt8] = []
            var state = State.value
            while true {
                switch state {
                case .value:
                    whitespace()
                    guard let byte = current else { return false }
                    switch byte {
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        position += 1
                        whitespace()
                        let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                        if take(close) {
                            state = .afterValue
                        } else {
                            open.append(byte)
                            state = byte == UInt8(ascii: "{") ? .key : .value
                        }
                    case UInt8(ascii: "\""):
                        guard string() else { return false }
                        state = .afterValue
                    case UInt8(ascii: "t"): guard literal("true") else { return false }; state = .afterValue
                    case UInt8(ascii: "f"): guard literal("false") else { return false }; state = .afterValue
                    case UInt8(ascii: "n"): guard literal("null") else { return false }; state = .afterValue
                    default:
                        guard number() else { return false }
                        state = .afterValue
                    }
                case .key:
                    whitespace()
                    guard current == UInt8(ascii: "\""), string() else { return false }
                    whitespace()
                    guard take(UInt8(ascii: ":")) else { return false }
                    state = .value
                case .afterValue:
                    whitespace()
                    guard let top = open.last else { return position == bytes.count }
                    if take(UInt8(ascii: ",")) {
                        state = top == UInt8(ascii: "{") ? .key : .value
                    } else if take(top == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        open.removeLast()
                    } else {
                        return false
                    }
                }
            }
        }

        mutating func literal(_ word: String) -> Bool {
            for byte in word.utf8 { guard take(byte) else { return false } }
            return true
        }

        mutating func digits() -> Int {
            let start = position
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
            return position - start
        }

        mutating func number() -> Bool {
            _ = take(UInt8(ascii: "-"))
            if take(UInt8(ascii: "0")) {
                // A leading zero stands alone.
            } else {
                guard let byte = current, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) else { return false }
                _ = digits()
            }
            if take(UInt8(ascii: ".")) { guard digits() > 0 else { return false } }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
                guard digits() > 0 else { return false }
            }
            return true
        }

        mutating func string() -> Bool {
            position += 1  // the opening quote
            while let byte = current {
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    position += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = current, hex.isHexDigit else { return false }
                            position += 1
                        }
                    default:
                        return false
                    }
                case 0..<0x20:
                    return false
                default:
                    continue
                }
            }
            return false
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
