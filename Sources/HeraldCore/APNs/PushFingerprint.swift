import Crypto
import Foundation

/// What makes two deliveries the same notification to the same device: its device token, topic, `apns-id` and
/// payload, digested.
///
/// A provider that lost the answer to a push (a dropped connection, a gateway that crashed after delivering) sends it
/// again with the same `apns-id` — Apple's unique ID for the notification (S-05), and what `HeraldProvider` keeps
/// across its retries. The gateway and the device recognise such a retry by this fingerprint and do not show it
/// twice. Where Apple is silent (GAP): the payload is part of it, so a provider that reuses one `apns-id` for
/// different notifications still has each shown.
public struct PushFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The SHA-256 digest, lowercase hex.
    public let hex: String

    /// The fingerprint of a push.
    ///
    /// - Parameters:
    ///   - token: The device token, hex, as the provider addressed it.
    ///   - topic: The `apns-topic`.
    ///   - apnsID: The `apns-id`, lowercase.
    ///   - payload: The payload's bytes as the provider sent them.
    public init(token: String, topic: String, apnsID: String, payload: some DataProtocol) {
        var hash = SHA256()
        for field in [token.lowercased(), topic, apnsID.lowercased()] {
            hash.update(data: Array(field.utf8))
            hash.update(data: [0])
        }
        hash.update(data: payload)
        // On every push's path: hex by table, not String(format:) per byte.
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in hash.finalize() {
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        hex = String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public var description: String { hex }
}

extension DevicePush {
    /// The fingerprint that recognises this notification when it is delivered again under another delivery ID.
    public var fingerprint: PushFingerprint {
        PushFingerprint(token: token, topic: topic, apnsID: apnsID, payload: Array(payload.utf8))
    }
}
