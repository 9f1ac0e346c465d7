import Foundation

/// A push to a subscription's endpoint as RFC 8030 §5 has it, checked the way a push service checks it: its VAPID
/// credentials under the rules, `TTL`, `Urgency`, `Topic`, and the body's `aes128gcm` framing.
public struct WebPushRequest: Sendable {
    /// How long the service keeps the message for an absent user agent, in seconds (after clamping to
    /// ``longestTTL``); 0: delivered now or never.
    public let ttl: Int
    /// `Urgency` (`normal` when absent).
    public let urgency: WebPushUrgency
    /// `Topic`: a stored message with the same topic is replaced by this one.
    public let topic: String?
    /// The encrypted body (empty: a push without data).
    public let body: Data
    /// The sender's VAPID key and claims, when it sent credentials.
    public let vapid: (key: Data, claims: VAPIDAuthorization.Claims)?

    /// The longest `TTL` kept: 28 days (Herald's choice, as FCM's; a longer one is clamped and the answer's `TTL`
    /// header says so, RFC 8030 §5.2).
    public static let longestTTL = 2_419_200

    /// Reads and checks a push.
    ///
    /// - Parameters:
    ///   - header: The request's header field with this name (case-insensitive), `nil` when absent.
    ///   - body: The request body.
    ///   - origin: The push service's origin (what `aud` must be).
    ///   - boundKey: The subscription's `applicationServerKey`, when it was made with one (the sender must use it).
    ///   - rules: Apple's or the standard's.
    ///   - now: The time of the request.
    /// - Throws: ``WebPushFailure`` with the status and reason the service answers.
    public init(
        header: (String) -> String?, body: Data, origin: String, boundKey: Data?, rules: WebPushRules, now: Date
    ) throws(WebPushFailure) {
        if let authorization = header("authorization") {
            let credentials = try VAPIDAuthorization(header: authorization)
            if let boundKey, boundKey != credentials.publicKey {
                throw .badJwtToken("k= is not the applicationServerKey the subscription was made with")
            }
            vapid = (credentials.publicKey, try credentials.verify(origin: origin, now: now, rules: rules))
        } else if rules == .apple {
            throw .badJwtToken("the JWT is missing (Authorization: vapid t=…, k=…)")
        } else if boundKey != nil {
            throw .missingAuthorization("the subscription was made with an applicationServerKey: send VAPID credentials")
        } else {
            vapid = nil
        }
        guard let ttlText = header("ttl")?.trimmingCharacters(in: .whitespaces) else {
            throw .badTTL("the TTL header is required (RFC 8030 §5.2)")
        }
        guard let ttl = Int(ttlText), ttl >= 0, ttlText.allSatisfy(\.isASCII) else {
            throw .badTTL("TTL is \(ttlText); it takes a number of seconds, 0 or more")
        }
        self.ttl = min(ttl, Self.longestTTL)
        if let urgencyText = header("urgency")?.trimmingCharacters(in: .whitespaces).lowercased() {
            guard let urgency = WebPushUrgency(rawValue: urgencyText) else {
                throw .badUrgency("Urgency is \(urgencyText); it takes very-low, low, normal or high")
            }
            self.urgency = urgency
        } else {
            self.urgency = .normal
        }
        if let topic = header("topic")?.trimmingCharacters(in: .whitespaces) {
            let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            guard !topic.isEmpty, topic.count <= 32, topic.allSatisfy(alphabet.contains) else {
                throw .badTopic("Topic is at most 32 characters of the base64url alphabet")
            }
            self.topic = topic
        } else {
            self.topic = nil
        }
        if !body.isEmpty {
            guard header("content-encoding")?.trimmingCharacters(in: .whitespaces).lowercased() == "aes128gcm" else {
                throw .badEncryption("a body needs Content-Encoding: aes128gcm (RFC 8291)")
            }
            _ = try AES128GCMFraming(body: body)
        }
        self.body = body
    }
}
