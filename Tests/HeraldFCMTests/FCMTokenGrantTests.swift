import CryptoExtras
import Foundation
import HeraldCore
import HeraldFCM
import HeraldTestSupport
import HeraldTesting
import Testing

@Suite struct FCMTokenGrantTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let made = Result { try FCMServiceAccount.create(projectID: "herald-demo") }

    static func keyFile() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: made.get().keyFile) as? [String: Any])
    }

    /// An assertion as Google's auth libraries sign one, with `change` applied to the claims or header first.
    static func assertion(
        claims change: (inout [String: Any]) -> Void = { _ in }, header changeHeader: (inout [String: Any]) -> Void = { _ in },
        key: _RSA.Signing.PrivateKey? = nil
    ) throws -> String {
        let file = try keyFile()
        var header: [String: Any] = ["alg": "RS256", "typ": "JWT", "kid": file["private_key_id"]!]
        changeHeader(&header)
        var claims: [String: Any] = [
            "iss": file["client_email"]!, "scope": "https://www.googleapis.com/auth/firebase.messaging",
            "aud": "https://oauth2.googleapis.com/token", "iat": Int(now.timeIntervalSince1970),
            "exp": Int(now.timeIntervalSince1970) + 3_600,
        ]
        change(&claims)
        func part(_ object: [String: Any]) throws -> String {
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64URLEncodedString()
        }
        let signingInput = try part(header) + "." + part(claims)
        let signer = try key ?? _RSA.Signing.PrivateKey(pemRepresentation: file["private_key"] as! String)
        let signature = try signer.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + signature.rawRepresentation.base64URLEncodedString()
    }

    static func form(_ assertion: String, grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer") -> Data {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        return Data(
            "grant_type=\(grantType.addingPercentEncoding(withAllowedCharacters: allowed)!)&assertion=\(assertion)".utf8)
    }

    static func grant(_ body: Data, at now: Date = now) throws(FCMOAuthError) -> FCMTokenGrant {
        let account = try! made.get().account
        return try FCMTokenGrant(formBody: body, account: { $0 == account.clientEmail ? account : nil }, now: now)
    }

    @Test("The key file is Google's service-account format; its account's own assertion is granted, for messaging")
    func keyFileAndGrant() throws {
        let file = try Self.keyFile()
        #expect(file["type"] as? String == "service_account")
        #expect(file["project_id"] as? String == "herald-demo")
        #expect((file["private_key"] as? String)?.hasPrefix("-----BEGIN PRIVATE KEY-----\n") == true)
        #expect(file["token_uri"] as? String == "https://oauth2.googleapis.com/token")
        #expect((file["client_email"] as? String)?.hasSuffix("@herald-demo.iam.gserviceaccount.com") == true)
        let grant = try Self.grant(Self.form(try Self.assertion()))
        #expect(grant.account == (try Self.made.get().account))
        #expect(grant.allowsMessaging)
        let other = try Self.grant(
            Self.form(try Self.assertion { $0["scope"] = "https://www.googleapis.com/auth/userinfo.email" }))
        #expect(!other.allowsMessaging, "granted, but not for sending")
    }

    @Test("PyJWT with cryptography (what aioapns brings) signs from the key file as Google's auth libraries do: granted")
    func independentSigner() async throws {
        let folder = try ScratchFolder.make("herald-fcm")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("service-account.json")
        try Self.made.get().keyFile.write(to: path)
        let script = """
            import json, sys, jwt
            info = json.load(open(sys.argv[1]))
            now = int(sys.argv[2])
            claims = {"iss": info["client_email"], "scope": "https://www.googleapis.com/auth/firebase.messaging",
                      "aud": "https://oauth2.googleapis.com/token", "iat": now, "exp": now + 3600}
            print(jwt.encode(claims, info["private_key"], algorithm="RS256", headers={"kid": info["private_key_id"]}))
            """
        let python = try await ChildProcess.launch(
            "/usr/bin/python3", ["-c", script, path.path, "\(Int(Self.now.timeIntervalSince1970))"])
        let result = await python.wait(timeout: .seconds(60))
        #expect(result.status == 0, "\(result.error)")
        let assertion = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try Self.grant(Self.form(assertion)).allowsMessaging)
    }

    @Test("Refusals in Google's form: 400 with error and error_description")
    func refusals() throws {
        let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let cases: [(String, Data, FCMOAuthError.Code)] = [
            ("another grant type", Self.form(try Self.assertion(), grantType: "client_credentials"), .unsupportedGrantType),
            ("no grant type", Data("assertion=x".utf8), .invalidRequest),
            ("no assertion", Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer".utf8), .invalidRequest),
            ("not a JWT", Self.form("abc"), .invalidGrant),
            ("signed with another key", Self.form(try Self.assertion(key: otherKey)), .invalidGrant),
            ("another key ID", Self.form(try Self.assertion(header: { $0["kid"] = "0000" })), .invalidGrant),
            ("HS256", Self.form(try Self.assertion(header: { $0["alg"] = "HS256" })), .invalidGrant),
            ("an unknown account", Self.form(try Self.assertion { $0["iss"] = "who@x.iam.gserviceaccount.com" }), .invalidGrant),
            ("another audience", Self.form(try Self.assertion { $0["aud"] = "https://example.com/token" }), .invalidGrant),
            (
                "over an hour", Self.form(try Self.assertion { $0["exp"] = Int(Self.now.timeIntervalSince1970) + 3_601 }),
                .invalidGrant
            ),
            (
                "expired",
                Self.form(
                    try Self.assertion {
                        $0["exp"] = Int(Self.now.timeIntervalSince1970) - 1; $0["iat"] = Int(Self.now.timeIntervalSince1970) - 100
                    }), .invalidGrant
            ),
            (
                "issued in the future",
                Self.form(
                    try Self.assertion {
                        $0["iat"] = Int(Self.now.timeIntervalSince1970) + 600;
                        $0["exp"] = Int(Self.now.timeIntervalSince1970) + 1_200
                    }), .invalidGrant
            ),
            ("no scope", Self.form(try Self.assertion { $0["scope"] = nil }), .invalidScope),
        ]
        for (what, body, code) in cases {
            do {
                _ = try Self.grant(body)
                Issue.record("granted: \(what)")
            } catch {
                #expect(error.code == code, "\(what): \(error)")
                #expect(error.httpStatus == 400)
                #expect(error.body["error"] == .string(code.rawValue))
            }
        }
    }

    @Test("Project IDs as Google gives them")
    func projectIDs() {
        #expect(FCMServiceAccount.isValidProjectID("herald-demo"))
        for bad in ["short", "Herald-demo", "1herald", "herald-demo-", "herald_demo", String(repeating: "a", count: 31)] {
            #expect(!FCMServiceAccount.isValidProjectID(bad), "\(bad)")
        }
    }

    @Test(
        "FCMServiceAccountKey signs from the key file what the token endpoint grants, for an hour; files that are not a service account's key are refused with what is wrong"
    )
    func serviceAccountKey() throws {
        let key = try FCMServiceAccountKey(keyFile: try Self.made.get().keyFile)
        let account = try Self.made.get().account
        #expect(key.projectID == "herald-demo" && key.clientEmail == account.clientEmail)
        let body = try key.tokenRequestBody(now: Self.now)
        let grant = try Self.grant(body)
        #expect(grant.account == account)
        #expect(grant.scopes == ["https://www.googleapis.com/auth/firebase.messaging"])
        // Valid from `now` for an hour: refused once that hour is over.
        #expect(throws: FCMOAuthError.self) { try Self.grant(body, at: Self.now.addingTimeInterval(3_700)) }

        let file = try Self.keyFile()
        func refusal(_ data: Data) -> String? {
            do throws(FCMServiceAccountKey.Failure) {
                _ = try FCMServiceAccountKey(keyFile: data)
                return nil
            } catch {
                return error.description
            }
        }
        func refusal(_ change: (inout [String: Any]) -> Void) throws -> String? {
            var changed = file
            change(&changed)
            return refusal(try JSONSerialization.data(withJSONObject: changed))
        }
        #expect(try refusal { $0["type"] = "authorized_user" }?.contains("not a service account's") == true)
        #expect(try refusal { $0["private_key"] = nil } == "The key file has no private_key.")
        #expect(
            try refusal { $0["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" }?
                .contains("not an RSA private key") == true)
        #expect(refusal(Data("not json".utf8)) == "The key file is not JSON.")
    }
}
