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
        hex = hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    public var description: String { hex }
}

extension DevicePush {
    /// The fingerprint that recognises this notification when it is delivered again under another delivery ID.
    public var fingerprint: PushFingerprint {
        PushFingerprint(token: token, topic: topic, apnsID: apnsID, payload: Array(payload.utf8))
    }
}
