import Foundation

/// A strict check that a payload is a JSON object (RFC 8259), without building it.
///
/// The gateway must refuse a body that is not a JSON object (`BadRequestPayload`), but only needs the parsed object
/// when a request has no `apns-push-type` (the type is then inferred from `aps`). Parsing every payload with
/// `JSONSerialization` builds a dictionary of Foundation objects per push, and that parser is also more lenient than
/// the RFC (it takes trailing commas, for one); this scanner only reads the bytes, and strictly.
package enum JSONSyntax {
    /// What a document is.
    package enum Verdict: Sendable, Equatable {
        /// A JSON object in the plain subset every parser reads alike.
        case object
        /// A JSON object that uses what parsers differ on — exponents, numbers over 15 digits, `\u` escapes of
        /// UTF-16 surrogates, nesting deeper than ``JSONSyntax/plainDepth`` — to be confirmed by the parser that
        /// will read it.
        case unusualObject
        /// Not JSON, or JSON but not an object.
        case notAnObject
    }

    /// The deepest nesting counted as plain.
    static let plainDepth = 64

    /// Whether `bytes` are an APNs payload: UTF-8 text holding one JSON object under RFC 8259 (S-11, I-04).
    ///
    /// The one check the gateway (`BadRequestPayload`) and the provider library (before sending) share. A plain
    /// object is settled by the scanner alone; an unusual one must also be read by `JSONSerialization`, the parser
    /// a receiving app uses.
    ///
    /// - Parameter bytes: The request body.
    package static func isPayloadObject(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard String(validating: bytes, as: UTF8.self) != nil else { return false }
        switch classify(bytes) {
        case .object: return true
        case .unusualObject: return (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any]
        case .notAnObject: return false
        }
    }

    /// What `bytes` (already valid UTF-8) are: one JSON object with optional whitespace around it, or not.
    ///
    /// - Parameter bytes: The document.
    package static func classify(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{"), scanner.value() else { return .notAnObject }
        scanner.skipWhitespace()
        guard scanner.atEnd else { return .notAnObject }
        return scanner.unusual ? .unusualObject : .object
    }

    private struct Scanner: JSONCursor {
        let bytes: UnsafeRawBufferPointer
        var position = 0
        /// Whether something parsers differ on was seen.
        var unusual = false

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        var atEnd: Bool { position == bytes.count }

        /// Reads one value of any kind; containers iteratively, with a stack of what is open.
        mutating func value() -> Bool {
            // true: an object is open; false: an array.
            var open: [Bool] = []
            while true {
                skipWhitespace()
                guard let byte = peek() else { return false }
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let isObject = byte == UInt8(ascii: "{")
                    if open.count >= JSONSyntax.plainDepth { unusual = true }
                    position += 1
                    skipWhitespace()
                    if peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        position += 1
                    } else {
                        open.append(isObject)
                        // An object's first member starts with its key; an array's first element is a value.
                        if isObject { guard member() else { return false } }
                        continue
                    }
                case UInt8(ascii: "\""):
                    guard string() else { return false }
                case UInt8(ascii: "t"):
                    guard skip("true") else { return false }
                case UInt8(ascii: "f"):
                    guard skip("false") else { return false }
                case UInt8(ascii: "n"):
                    guard skip("null") else { return false }
                default:
                    // Exponents and numbers over 15 digits are where parsers differ (range, precision).
                    guard let number = number() else { return false }
                    if number.hasExponent || number.digits > 15 { unusual = true }
                }
                // A value is complete: close containers or go on to the next element.
                while let inObject = open.last {
                    skipWhitespace()
                    guard let next = peek() else { return false }
                    position += 1
                    if next == UInt8(ascii: ",") {
                        if inObject {
                            skipWhitespace()
                            guard member() else { return false }
                        }
                        break
                    } else if next == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        open.removeLast()
                    } else {
                        return false
                    }
                }
                if open.isEmpty { return true }
            }
        }

        /// Reads `"key" :` of an object member, leaving the position at its value.
        mutating func member() -> Bool {
            guard peek() == UInt8(ascii: "\""), string() else { return false }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { return false }
            position += 1
            return true
        }

        mutating func string() -> Bool {
            position += 1  // the opening quote
            while let byte = peek() {
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = peek() else { return false }
                    position += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard let scalar = hexQuad() else { return false }
                        // Surrogates, paired or not: parsers differ on unpaired ones.
                        if (0xD800...0xDFFF).contains(scalar) { unusual = true }
                    default:
                        return false
                    }
                case 0x00..<0x20:
                    return false
                default:
                    continue
                }
            }
            return false
        }
    }
}
