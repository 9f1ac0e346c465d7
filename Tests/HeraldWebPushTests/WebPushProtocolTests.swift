import Crypto
import Foundation
import HeraldCore
import HeraldWebPush
import Testing

/// Web Push's protocol pieces (issue 46): VAPID under Apple's rules and the standard's, the `aes128gcm` framing a push
/// service checks, RFC 8291's message encryption, Declarative Web Push messages.
@Suite struct WebPushProtocolTests {
    static let origin = "https://localhost:2197"
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let key = P256.Signing.PrivateKey()

    static func header(
        origin: String = origin, subject: String? = "mailto:ops@example.com", expiresIn: TimeInterval = 3_600,
        key: P256.Signing.PrivateKey = key
    ) throws -> String {
        try VAPIDAuthorization.header(
            origin: origin, subject: subject, expiresAt: now.addingTimeInterval(expiresIn), privateKey: key)
    }

    static func verify(_ header: String, rules: WebPushRules = .apple) throws(WebPushFailure) -> VAPIDAuthorization.Claims {
        try VAPIDAuthorization(header: header).verify(origin: origin, now: now, rules: rules)
    }

    @Test("RFC 8292: a token signed with k's key, aud the service's origin, exp within a day, sub mailto: or https: verifies")
    func vapidAccepted() throws {
        let claims = try Self.verify(try Self.header())
        #expect(claims.audience == Self.origin && claims.subject == "mailto:ops@example.com")
        #expect(try Self.verify(try Self.header(subject: "https://push.example.com/contact")).subject != nil)
        // The origin as a URL may end with a slash; the header's parameters may be quoted.
        #expect(try Self.verify(try Self.header(origin: Self.origin + "/")).audience == Self.origin + "/")
        let quoted = try Self.header().replacingOccurrences(of: "t=", with: "t=\"").replacingOccurrences(
            of: ", k=", with: "\", k=")
        _ = try Self.verify(quoted)
    }

    @Test(
        "Apple's BadJwtToken cases, each 403 {\"reason\":\"BadJwtToken\"}: missing, wrong key, sub not a URL or mailto:, aud not the origin, exp over a day ahead — and the field's: mailto with a space or angle brackets, admin@localhost"
    )
    func vapidRefused() throws {
        let other = P256.Signing.PrivateKey()
        // Signed with another key than k's.
        let good = try Self.header()
        let forged = try Self.header(key: other)
        let mixed =
            String(forged.split(separator: ",")[0]) + ", k="
            + Self.key.publicKey.x963Representation.base64URLEncodedString()
        let cases: [(String, String)] = [
            (mixed, "not signed with the private key of k="),
            (try Self.header(subject: "ops@example.com"), "subject claim"),
            (try Self.header(subject: nil), "subject claim"),
            (try Self.header(subject: "mailto: <ops@example.com>"), "subject claim"),
            (try Self.header(subject: "mailto:admin@localhost"), "subject claim"),
            (try Self.header(subject: "https://localhost/contact"), "subject claim"),
            (try Self.header(subject: "http://example.com"), "subject claim"),
            (try Self.header(origin: "https://web.push.apple.com"), "audience claim"),
            (try Self.header(origin: "https://localhost:2197/push"), "audience claim"),
            (try Self.header(expiresIn: 86_401), "more than one day"),
            (try Self.header(expiresIn: -1), "expired"),
            ("vapid k=" + Self.key.publicKey.x963Representation.base64URLEncodedString(), "missing"),
            ("WebPush " + good, "not vapid"),
            ("vapid t=a.b.c, k=AAAA", "P-256"),
        ]
        for (header, detail) in cases {
            do {
                _ = try Self.verify(header)
                Issue.record("accepted: \(header)")
            } catch {
                #expect(error.status == 403 && error.reason == "BadJwtToken", "\(error)")
                #expect(error.body == #"{"reason":"BadJwtToken"}"#)
                #expect(error.detail.contains(detail), "\(header): \(error.detail)")
            }
        }
        // The standard's rules take a subject Apple refuses, or none.
        #expect(try Self.verify(try Self.header(subject: "mailto:admin@localhost"), rules: .standard).audience == Self.origin)
        #expect(try Self.verify(try Self.header(subject: nil), rules: .standard).subject == nil)
        #expect(throws: WebPushFailure.self) { try Self.verify(try Self.header(expiresIn: 90_000), rules: .standard) }
    }

    /// A request's headers as a lookup.
    static func headers(_ fields: [String: String]) -> (String) -> String? {
        let lowered = Dictionary(uniqueKeysWithValues: fields.map { ($0.key.lowercased(), $0.value) })
        return { lowered[$0.lowercased()] }
    }

    @Test(
        "RFC 8030 §5: TTL required (a number, clamped to 28 days), Urgency of four values, Topic of 32 base64url characters, a body only as aes128gcm framed for one record of a 65-byte key ID, at most 4,096 bytes (413); a bound subscription takes only its key; standard rules take no credentials for an unbound one (401 for a bound one)"
    )
    func requests() throws {
        let keys = WebPushCipher.UserAgentKeys()
        let body = try WebPushCipher.encrypt(Data("hi".utf8), for: keys.subscription)
        func request(
            _ fields: [String: String], body: Data = body, bound: Data? = nil, rules: WebPushRules = .apple
        ) throws(WebPushFailure) -> WebPushRequest {
            try WebPushRequest(
                header: Self.headers(fields), body: body, origin: Self.origin, boundKey: bound, rules: rules, now: Self.now)
        }
        let auth = try Self.header()
        let base = ["Authorization": auth, "TTL": "60", "Content-Encoding": "aes128gcm"]
        let ok = try request(base)
        #expect(ok.ttl == 60 && ok.urgency == .normal && ok.topic == nil && ok.body == body)
        #expect(ok.vapid?.key == Self.key.publicKey.x963Representation)
        #expect(try request(base.merging(["TTL": "99999999"]) { $1 }).ttl == WebPushRequest.longestTTL)
        #expect(try request(base.merging(["Urgency": "very-low", "Topic": "score_1-A"]) { $1 }).urgency == .veryLow)
        #expect(try request(base, body: Data()).body.isEmpty)
        #expect(try request(base, bound: Self.key.publicKey.x963Representation).vapid != nil)

        func refused(_ expected: (Int, String), _ make: () throws(WebPushFailure) -> WebPushRequest) {
            do {
                _ = try make()
                Issue.record("accepted, expected \(expected)")
            } catch {
                #expect(error.status == expected.0 && error.reason == expected.1, "\(error)")
            }
        }
        refused((400, "BadTTL")) { () throws(WebPushFailure) in try request(base.filter { $0.key != "TTL" }) }
        refused((400, "BadTTL")) { () throws(WebPushFailure) in try request(base.merging(["TTL": "-1"]) { $1 }) }
        refused((400, "BadUrgency")) { () throws(WebPushFailure) in try request(base.merging(["Urgency": "urgent"]) { $1 }) }
        refused((400, "BadTopic")) { () throws(WebPushFailure) in
            try request(base.merging(["Topic": String(repeating: "a", count: 33)]) { $1 })
        }
        refused((400, "BadTopic")) { () throws(WebPushFailure) in try request(base.merging(["Topic": "a b"]) { $1 }) }
        refused((400, "BadEncryption")) { () throws(WebPushFailure) in
            try request(base.merging(["Content-Encoding": "aesgcm"]) { $1 })
        }
        refused((400, "BadEncryption")) { () throws(WebPushFailure) in try request(base, body: Data("plain".utf8)) }
        refused((400, "BadEncryption")) { () throws(WebPushFailure) in try request(base, body: body.prefix(100)) }
        var smallRecord = body
        smallRecord.replaceSubrange(16..<20, with: [0, 0, 0, 17])
        refused((400, "BadEncryption")) { () throws(WebPushFailure) in try request(base, body: smallRecord) }
        var twoRecords = body
        twoRecords.replaceSubrange(16..<20, with: [0, 0, 0, 18])
        refused((400, "BadEncryption")) { () throws(WebPushFailure) in try request(base, body: twoRecords) }
        refused((413, "PayloadTooLarge")) { () throws(WebPushFailure) in
            try request(base, body: body + Data(count: 4_097 - body.count))
        }
        refused((403, "BadJwtToken")) { () throws(WebPushFailure) in
            try request(base, bound: P256.Signing.PrivateKey().publicKey.x963Representation)
        }
        refused((403, "BadJwtToken")) { () throws(WebPushFailure) in try request(base.filter { $0.key != "Authorization" }) }
        // The standard's rules: no credentials for an unbound subscription; 401 for a bound one.
        let unsigned = base.filter { $0.key != "Authorization" }
        #expect(try request(unsigned, rules: .standard).vapid == nil)
        refused((401, "MissingAuthorization")) { () throws(WebPushFailure) in
            try request(unsigned, bound: Self.key.publicKey.x963Representation, rules: .standard)
        }
    }

    @Test(
        "RFC 8291: what encrypt makes, decrypt reads with the subscription's keys and no other; padding and tampering are caught")
    func cipher() throws {
        let keys = WebPushCipher.UserAgentKeys()
        let message = Data(#"{"web_push":8030,"notification":{"title":"发送通知","navigate":"https://example.com/"}}"#.utf8)
        let body = try WebPushCipher.encrypt(message, for: keys.subscription)
        #expect(body.count == 86 + message.count + 1 + 16)
        #expect(try WebPushCipher.decrypt(body, with: keys) == message)
        #expect(throws: WebPushCipher.Unreadable.self) { try WebPushCipher.decrypt(body, with: WebPushCipher.UserAgentKeys()) }
        var tampered = body
        tampered[tampered.count - 20] ^= 1
        #expect(throws: WebPushCipher.Unreadable.self) { try WebPushCipher.decrypt(tampered, with: keys) }
        let empty = try WebPushCipher.encrypt(Data(), for: keys.subscription)
        #expect(try WebPushCipher.decrypt(empty, with: keys).isEmpty)
    }

    @Test(
        "Declarative Web Push: web_push 8030 with a title and a navigate URL is a message; anything else needs a service worker")
    func declarative() throws {
        let message = try DeclarativeWebPushMessage(
            payload: Data(
                #"{"web_push":8030,"notification":{"title":"Goal","body":"2–1","navigate":"https://score.example/game","silent":true,"app_badge":3},"mutable":true}"#
                    .utf8))
        #expect(message.title == "Goal" && message.body == "2–1" && message.navigate == "https://score.example/game")
        #expect(message.silent && message.appBadge == 3 && message.mutable)
        for payload in [
            "hello", #"{"notification":{"title":"t","navigate":"https://x/"}}"#, #"{"web_push":8030}"#,
            #"{"web_push":8030,"notification":{"navigate":"https://x/"}}"#,
            #"{"web_push":8030,"notification":{"title":"t"}}"#,
            #"{"web_push":8031,"notification":{"title":"t","navigate":"https://x/"}}"#,
        ] {
            #expect(throws: DeclarativeWebPushMessage.NotDeclarative.self) {
                try DeclarativeWebPushMessage(payload: Data(payload.utf8))
            }
        }
    }
}
