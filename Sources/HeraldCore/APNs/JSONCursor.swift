/// A position in JSON text's UTF-8 bytes, with the lexical rules of RFC 8259 that both of HeraldCore's JSON readers
/// share: ``JSONSyntax`` (checks a payload without building it) and `JSONValue(reading:)` (builds values).
///
/// Each rule either consumes what it read or, when the text breaks the rule, stops at the offending byte.
protocol JSONCursor {
    /// The text.
    var bytes: UnsafeRawBufferPointer { get }
    /// The next byte to read.
    var position: Int { get set }
}

/// How a number was written, for readers that treat some numbers differently.
struct JSONNumberShape {
    /// Digits before and after the decimal point (a lone leading `0` counts as one).
    var digits: Int
    /// Whether it has a fraction.
    var hasFraction: Bool
    /// Whether it has an exponent.
    var hasExponent: Bool
}

extension JSONCursor {
    /// The next byte, or `nil` at the end.
    func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    /// Consumes `literal` (`true`, `false`, `null`) if the text goes on with it.
    mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] { return false }
        position += count
        return true
    }

    /// Reads the four hex digits of a `\u` escape.
    mutating func hexQuad() -> UInt32? {
        guard bytes.count - position >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[position].hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Reads a number: `-`, integer part without leading zeros, optional fraction and exponent.
    mutating func number() -> JSONNumberShape? {
        var shape = JSONNumberShape(digits: 0, hasFraction: false, hasExponent: false)
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), first.isASCIIDigit else { return nil }
        position += 1
        shape.digits = 1
        if first != UInt8(ascii: "0") { shape.digits += skipDigits() }
        if peek() == UInt8(ascii: ".") {
            position += 1
            let fraction = skipDigits()
            guard fraction > 0 else { return nil }
            shape.digits += fraction
            shape.hasFraction = true
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            position += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { return nil }
            shape.hasExponent = true
        }
        return shape
    }

    /// Skips ASCII digits; returns how many.
    private mutating func skipDigits() -> Int {
        let start = position
        while let byte = peek(), byte.isASCIIDigit { position += 1 }
        return position - start
    }
}
