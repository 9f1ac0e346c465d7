import Foundation

/// A device token: the bytes that address one app in one environment on one device, written as hex in
/// `/3/device/<token>`.
///
/// Apple says not to assume a size (S-02; simulator tokens are longer than device tokens), so any non-empty even
/// number of hex digits up to ``maximumByteCount`` bytes is a well-formed token.
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// The longest token Herald accepts, in bytes; longer ones are `BadDeviceToken`.
    public static let maximumByteCount = 100

    /// The token's bytes.
    public let bytes: [UInt8]

    /// Creates a token from its bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Reads a token from its hex form (either case); `nil` if it is not a well-formed token.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard !utf8.isEmpty, utf8.count % 2 == 0, utf8.count / 2 <= Self.maximumByteCount else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = utf8[index].hexDigitValue, let low = utf8[index + 1].hexDigitValue else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    /// A token's hex form (either case) as `/3/device/<token>` names it, lowercase — `nil` where ``init(hex:)`` is.
    ///
    /// For a path read on every push: it checks the digits without making the bytes, and a lowercase form (every
    /// token the gateway issues) is taken as it is.
    public static func canonicalHex(_ text: some StringProtocol) -> String? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count % 2 == 0, utf8.count / 2 <= maximumByteCount else { return nil }
        var uppercase = false
        for byte in utf8 {
            guard byte.hexDigitValue != nil else { return nil }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") { uppercase = true }
        }
        return uppercase ? text.lowercased() : String(text)
    }

    /// A new random 32-byte token, the size of today's device tokens.
    public static func random() -> DeviceToken {
        var generator = SystemRandomNumberGenerator()
        return DeviceToken(bytes: (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The lowercase hex form used in `:path`.
    public var hex: String { bytes.lowercaseHex }

    public var description: String { hex }
}
