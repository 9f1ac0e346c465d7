import Foundation
import HeraldCore

/// An FCM registration token as Herald issues one: the app installation's ID (a Firebase installation ID), `:`, and
/// an opaque part — FCM's shape, without a checksum.
///
/// A token can be well formed and still unknown (never issued, or revoked): the send then answers `UNREGISTERED`. One
/// that is not well formed is `INVALID_ARGUMENT`, as Google answers "The registration token is not a valid FCM
/// registration token".
public struct FCMRegistrationToken: Sendable, Hashable, CustomStringConvertible {
    /// The installation ID before the `:` (the `fid` target names the same installation).
    public let installationID: String
    /// The whole token.
    public let description: String

    /// Reads a token, `nil` when it is not well formed: an installation ID of 11 to 64 base64url characters, `:`, and
    /// 32 to 1,024 base64url characters.
    ///
    /// - Parameter text: The token as a sender gives it.
    public init?(_ text: String) {
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let installation = text.utf8[..<colon]
        let opaque = text.utf8[text.utf8.index(after: colon)...]
        guard (11...64).contains(installation.count), (32...1_024).contains(opaque.count),
            installation.allSatisfy(Self.isBase64URL), opaque.allSatisfy(Self.isBase64URL)
        else { return nil }
        installationID = String(Substring(installation))
        description = text
    }

    /// Whether `text` could be a Firebase installation ID (the `fid` target): 11 to 64 base64url characters.
    ///
    /// - Parameter text: The ID as a sender gives it.
    public static func isWellFormedInstallationID(_ text: String) -> Bool {
        (11...64).contains(text.utf8.count) && text.utf8.allSatisfy(isBase64URL)
    }

    /// A new token for a new installation: a Firebase installation ID (22 characters, the first `c`, `d`, `e` or
    /// `f`, as Firebase makes them), `:APA91b` and 140 random base64url characters.
    public static func random() -> FCMRegistrationToken {
        var installation = [UInt8](repeating: 0, count: 17)
        var generator = SystemRandomNumberGenerator()
        for index in installation.indices { installation[index] = generator.next() }
        // Firebase: the first four bits are 0111, so the ID starts with c, d, e or f.
        installation[0] = 0x70 | (installation[0] & 0x0F)
        let installationID = String(Data(installation).base64URLEncodedString().prefix(22))
        var opaque = [UInt8](repeating: 0, count: 105)
        for index in opaque.indices { opaque[index] = generator.next() }
        // Always well formed: 22 and 146 base64url characters.
        return FCMRegistrationToken("\(installationID):APA91b\(Data(opaque).base64URLEncodedString())")!
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
