import Crypto
import Foundation
import HeraldCore
import HeraldGateway
import HeraldWebPush

extension FuzzTarget {
    /// The application server key every seed VAPID token is signed with (fixed, so that seeds reach the signature and
    /// claim checks).
    static let vapidKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 9, count: 32))
    /// The user agent's keys the seed bodies are encrypted to (fixed: seeds reach decryption). Made for each input,
    /// not kept in a static: LeakSanitizer cannot see the pointer in a static `Data` of more than 14 bytes (its
    /// storage reference shares a word with the slice's range) and reports the static as a leak.
    static func webPushKeys() -> WebPushCipher.UserAgentKeys {
        WebPushCipher.UserAgentKeys(
            privateKey: try! P256.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 5, count: 32)),
            authSecret: Data(repeating: 1, count: 16))
    }
    static let webPushOrigin = "https://localhost:2197"
    static let webPushNow = Date(timeIntervalSince1970: 1_795_000_000)

    /// VAPID `Authorization` headers (RFC 8292) under Apple's rules and the standard's: the scheme, `t=` and `k=`,
    /// the JWT's header, claims and ES256 signature.
    static let webPushVAPID = FuzzTarget(
        name: "web-push-vapid",
        summary: "Web Push VAPID headers (RFC 8292): vapid t=<JWT>, k=<key>, the JWT's claims under Apple's rules",
        seeds: {
            let signed =
                (try? VAPIDAuthorization.header(
                    origin: webPushOrigin, subject: "mailto:ops@example.com",
                    expiresAt: webPushNow.addingTimeInterval(600), privateKey: vapidKey)) ?? ""
            let key = vapidKey.publicKey.x963Representation.base64URLEncodedString()
            return [
                signed, signed.replacingOccurrences(of: ", ", with: ","), "vapid t=a.b.c, k=\(key)", "vapid k=\(key)",
                "WebPush x", "vapid t=\"\", k=\"\"",
            ].map { Array($0.utf8) }
        },
        run: { input in
            guard let credentials = try? VAPIDAuthorization(header: input.text) else { return }
            try require(credentials.publicKey.count == 65, "parsed a key of \(credentials.publicKey.count) bytes")
            for rules in WebPushRules.allCases {
                let verified: Result<VAPIDAuthorization.Claims, WebPushFailure>
                do throws(WebPushFailure) {
                    verified = .success(try credentials.verify(origin: webPushOrigin, now: webPushNow, rules: rules))
                } catch {
                    verified = .failure(error)
                }
                switch verified {
                case .success(let claims):
                    try require(claims.expiresAt > webPushNow, "accepted an expired token")
                    try require(claims.expiresAt.timeIntervalSince(webPushNow) <= 86_400, "accepted an exp over a day")
                case .failure(let error):
                    try require(error.status == 403 && error.reason == "BadJwtToken", "refused with \(error)")
                }
            }
        })

    /// Push message bodies: the `aes128gcm` framing a push service checks, then RFC 8291 decryption and a Declarative
    /// Web Push message, as the device reads them.
    static let webPushBody = FuzzTarget(
        name: "web-push-body",
        summary: "Web Push bodies: aes128gcm framing (RFC 8188/8291), decryption, Declarative Web Push JSON",
        seeds: {
            let declarative = Data(#"{"web_push":8030,"notification":{"title":"t","navigate":"https://x/"}}"#.utf8)
            let bodies = [declarative, Data("plain".utf8), Data()].compactMap {
                try? WebPushCipher.encrypt($0, for: webPushKeys().subscription)
            }
            return bodies.map { Array($0) } + [Array(repeating: 0, count: 21), Array(declarative)]
        },
        run: { input in
            let body = Data(input)
            let framing: AES128GCMFraming
            do throws(WebPushFailure) {
                framing = try AES128GCMFraming(body: body)
            } catch {
                try require([400, 413].contains(error.status), "framing refused with \(error)")
                _ = try? DeclarativeWebPushMessage(payload: body)
                return
            }
            try require(framing.keyID.count == 65 && framing.salt.count == 16, "framing without its parts")
            try require(framing.record.count >= 17 && framing.record.count <= Int(framing.recordSize), "bad record")
            guard let plaintext = try? WebPushCipher.decrypt(body, with: webPushKeys()) else { return }
            _ = try? DeclarativeWebPushMessage(payload: plaintext)
        })
}

extension FuzzTarget {
    /// Mozilla's WebPush protocol as Firefox speaks it to the device port: what each message stands for, and the
    /// device channel's messages written back in its form.
    static let mozillaPush = FuzzTarget(
        name: "mozilla-push",
        summary: "Mozilla's WebPush protocol (Firefox's push service WebSocket): hello, register, unregister, ack, nack, ping",
        seeds: {
            [
                #"{"messageType":"hello","broadcasts":{},"use_webpush":true}"#,
                #"{"messageType":"hello","broadcasts":{"remote-settings/monitor_changes":"\"0\""},"use_webpush":true,"uaid":"ea3b12846a18e2652a953379d16e12fb"}"#,
                #"{"channelID":"1188fe5e-99ea-4800-95cf-dcdd87d0e895","messageType":"register","key":"BA0dvoKBQ3lr8ysMV1Zjyc3YkAUL_RqAYvrnTRDgUL_ggCBUlvxHBKOPHtlyD2tHMWdu5-F03kB5YUzcM4vKDLI="}"#,
                #"{"channelID":"a86685df-07ea-4bb1-9cfb-300166fc450b","messageType":"unregister","code":200}"#,
                #"{"messageType":"ack","updates":[{"channelID":"1188fe5e-99ea-4800-95cf-dcdd87d0e895","version":"01a2233d-8917-7c5a-9fad-052d8f8752a5","code":100}]}"#,
                #"{"messageType":"nack","channelID":"1188fe5e","version":"x","code":301}"#, "{}",
                #"{"messageType":"broadcast_subscribe","broadcasts":{}}"#,
            ].map { Array($0.utf8) }
        },
        run: { input in
            guard case .messages(let messages) = MozillaPushProtocol.inbound(input.text) else { return }
            for message in messages {
                switch message {
                case .hello(let deviceID, let secret):
                    try require(
                        deviceID == MozillaPushProtocol.prefix + secret && MozillaPushProtocol.isUAID(secret),
                        "a hello became device \(deviceID)")
                case .register(let bundleID, _, .webPush), .unregister(let bundleID, _, .webPush):
                    try require(
                        APNsRequestHeaders.isValidTopic(bundleID) && bundleID.hasPrefix(MozillaPushProtocol.prefix),
                        "a channel became the app \(bundleID)")
                    let answer = MozillaPushProtocol.outbound(
                        .unregistered(bundleID: bundleID, environment: .production, purpose: .webPush(applicationServerKey: nil)),
                        serviceOrigin: "https://localhost:2199")
                    try require(answer.flatMap { try? JSONValue(reading: $0) } != nil, "an answer that is not JSON")
                case .ack:
                    break
                default:
                    try require(false, "Firefox's message became \(message)")
                }
            }
        })
}
