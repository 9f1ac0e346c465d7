extension Sequence<UInt8> {
    /// These bytes as lowercase hex, two digits a byte: what `String(format: "%02x")` per byte makes, without
    /// Foundation's formatter (a few microseconds a byte on Linux).
    package var lowercaseHex: String {
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(.lowercaseHexDigit(byte >> 4))
            text.append(.lowercaseHexDigit(byte & 0x0F))
        }
        return String(decoding: text, as: UTF8.self)
    }
}
