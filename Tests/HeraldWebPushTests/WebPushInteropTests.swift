import Crypto
import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldWebPush
import Testing

/// Herald's Web Push pieces against the Python libraries providers use (pywebpush 2, py-vapid, http-ece: PyPI,
/// unmodified): what they make, Herald reads, and the other way round.
@Suite(.timeLimit(.minutes(2))) struct WebPushInteropTests {
    /// Runs `script` with python3; its standard output, trimmed.
    static func python(_ script: String, _ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run("python3", ["-c", script] + arguments, timeout: .seconds(60))
        #expect(result.status == 0, "\(result.error)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "pywebpush encrypts (aes128gcm) and py-vapid signs: Herald's push service accepts the request and the user agent's keys decrypt it"
    )
    func fromPywebpush() async throws {
        let keys = WebPushCipher.UserAgentKeys()
        let script = """
            import base64, sys, time, json
            import pywebpush, py_vapid
            p256dh, auth, origin = sys.argv[1:4]
            sub = {"endpoint": origin + "/push/abc", "keys": {"p256dh": p256dh, "auth": auth}}
            body = pywebpush.WebPusher(sub).encode("Lions 2–1 Tigers".encode(), content_encoding="aes128gcm")["body"]
            vapid = py_vapid.Vapid02()
            vapid.generate_keys()
            headers = vapid.sign({"aud": origin, "sub": "mailto:ops@example.com", "exp": int(time.time()) + 3600})
            print(json.dumps({"body": base64.urlsafe_b64encode(body).decode(), "authorization": headers["Authorization"]}))
            """
        let origin = "https://localhost:2197"
        let output = try await Self.python(
            script,
            [
                keys.subscription.p256dh.base64URLEncodedString(), keys.subscription.auth.base64URLEncodedString(), origin,
            ])
        let made = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String])
        let bodyText = try #require(made["body"])
        let body = try #require(Data(base64URLEncoded: bodyText))
        let authorization = try #require(made["authorization"])
        let fields = ["authorization": authorization, "ttl": "0", "content-encoding": "aes128gcm"]
        let request = try WebPushRequest(
            header: { fields[$0.lowercased()] }, body: body, origin: origin, boundKey: nil, rules: .apple, now: Date())
        #expect(request.vapid?.claims.subject == "mailto:ops@example.com")
        #expect(String(decoding: try WebPushCipher.decrypt(request.body, with: keys), as: UTF8.self) == "Lions 2–1 Tigers")
    }

    @Test("Herald encrypts to a subscription and signs VAPID: http-ece decrypts the body, py-vapid verifies the token")
    func toPython() async throws {
        let userAgent = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { UInt8($0) })
        let body = try WebPushCipher.encrypt(
            Data("发送通知".utf8), for: .init(p256dh: userAgent.publicKey.x963Representation, auth: auth))
        let signing = P256.Signing.PrivateKey()
        let header = try VAPIDAuthorization.header(
            origin: "https://localhost:2197", subject: "mailto:ops@example.com", expiresAt: Date().addingTimeInterval(600),
            privateKey: signing)
        let script = """
            import base64, sys
            import http_ece
            from cryptography.hazmat.primitives import serialization
            from py_vapid import Vapid02
            from py_vapid.utils import b64urldecode
            body, private, auth, header = (argument.encode() for argument in sys.argv[1:5])
            key = serialization.load_der_private_key(b64urldecode(private), None)
            text = http_ece.decrypt(b64urldecode(body), private_key=key, auth_secret=b64urldecode(auth), version="aes128gcm")
            header = header.decode()
            # py-vapid's parser wants no space after the comma (RFC 8292's example has one).
            print(text.decode(), Vapid02.verify(header.replace(", ", ",")))
            """
        let output = try await Self.python(
            script,
            [
                body.base64URLEncodedString(), userAgent.derRepresentation.base64URLEncodedString(),
                auth.base64URLEncodedString(), header,
            ])
        #expect(output == "发送通知 True")
    }
}
