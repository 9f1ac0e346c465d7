import CryptoExtras
import Foundation
import HeraldCore
import HeraldFCM

extension FuzzTarget {
    /// The service account every seed assertion is signed for (a fixed key, so that seeds reach the signature check).
    static let grantAccount: (account: FCMServiceAccount, key: _RSA.Signing.PrivateKey)? = {
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: grantKeyPEM) else { return nil }
        let account = FCMServiceAccount(
            projectID: "herald-fuzz", clientEmail: "fuzz@herald-fuzz.iam.gserviceaccount.com", clientID: "1",
            privateKeyID: "k1", publicKeyPEM: key.publicKey.pemRepresentation)
        return (account, key)
    }()

    /// A throwaway RSA-2048 key made for this target (it signs nothing else).
    static let grantKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDPYxSgsHxyyHy0
        QO92iaIyuWtcdVoWkPTUFOxX1Un6dq28I9Ye6Lmkk2KL70r/AWW1ReIe5jeVW134
        2IPUVbttQrW3OYtsta1e4/Bs56EpTe/+ybTNVfO32Qfn99w+O5xwxG7R33bH7cgA
        bqeer+x1KcWZx5ELF8m9lvdLrgt/cUQfpurq7ff4f5DMUZnlcK6G/azjDaLrbfoo
        y1qUk1w6TEDJSZf0Bz1zymHbN+ppWJ9GYwYPMv8pm73G/6VX0kvtMngdzhgDNtGk
        iaW7itERHXd9GYY+oev4sdLjyw13/3Uri7HBxuVevbuYgLmlrBjgVJroqPdaRoip
        oyzCxDtVAgMBAAECggEAA0IoHNYifsumTWZ0ydKppFuc3Erf0jC4LvWBeQrRKXMR
        rrJR5vUDieBRZv8Ltlwg1CEwZH3ZAcUint6mA8nlr8gtP5lY4m99gOyDaXpFM7de
        M8GmVgTyOg/USMRTZvDTPbfi75bqCptD7kQr6NDaTIrfoovL3y1cWJMIcvpvGjj0
        yHrME6FGE5RhxUdXDt/qbRmf/xzN8QkHZrB1IIGYjQJOERqzISUBbLUq2ik1IVTN
        prO1kxD0k3BBBGvRiLGlgccQWEq7TsZYaR5BNL3WvYTwphDNVjLsW8Z5KBB89Hxx
        WkD/aR7GhlxhLe/MjVpXtxC4gzUik54SeXEA/stPIQKBgQDqy4KTC6isTN2MERmn
        ywOkXMKk6Z1ed8TMk1v0GgwROWZ0t3tSnh7FtAQ0SodR1yfk0g26ADyRLIXGVTQv
        W4LmCCdKIjcn7gURzu5kQvwjbOl0WVD0eAs9Rz0x95gobIbmXe5zanF+1PAAPYDQ
        dJkTfTgRPXjM7dTFMXl2A1Q9NQKBgQDiHeVLReavkLx+YIxZ/lbFNy92ppSgDL3Y
        iu6yg1JOjdjsfEsqE9bGu6qCpT90YdzQV6/PGbgWhm5vBMi1gmBJrcbr2mcvQ2eB
        fH5Ou7NTQ/1SBdT6sOZtp1I2XtYmnLRWyDF3slqXTm/I8Hk1pIDF9898wL3MyorF
        j/HqX9NpoQKBgQDQ21D+bpuPERzuMHPq31sRBPab7bdvxghIljhwrg7X74BlCKXp
        uv/Si6xFu5odwc8Z64QMVZOK69jfsQEnszaAWvZgKol3unHGApXql+9jr8kHF0A9
        Bt+wlcMoxH8UTl29ZAbtodztnosTG6KPS3izbmrGYzEm0dS3yKerw5BWlQKBgAto
        CqsTaaGtoXSWlj3r8KCeOgy4NoMkYWdNCuGCcmJ4EVtModYLjigUS3OvtlW+og74
        fWvrFjg8q9F54k4Vt5m/5Gr9Z3sg4VXM2+pI2bD3mw3KMYY76kPZzvHjMtZbzVUb
        YDNzkdJUKJtwVgz4sW5LI/JdHrX3+awhqMhz8QxBAoGBAOAIeRsSSPwrP9c3newI
        vP3OEj9++qelhqWDs0eVi0M//IGeg2aiJ9/vLLJS+kBDnsxB6CmnkKeW472eVV5n
        sHJKam9Mf+QWFvItn1OcSebAdXwnNLQN51HZcIUC/Ip8UEZ5fYy69tWVwo6IbMxg
        kJ6yg+yhTWDY/214ma2D5d/6
        -----END PRIVATE KEY-----
        """

    /// OAuth 2 token requests of FCM's service accounts: the form body and its JWT-bearer assertion, parsed and checked.
    static let oauthGrant = FuzzTarget(
        name: "oauth-grant",
        summary: "OAuth 2 JWT-bearer token requests (FCM's front door): the form, the assertion's JSON, RS256 verification",
        seeds: {
            func encode(_ text: String) -> String { Data(text.utf8).base64URLEncodedString() }
            let header = encode(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#)
            let claims = encode(
                #"{"aud":"https://oauth2.googleapis.com/token","exp":1800003600,"iat":1800000000,"iss":"fuzz@herald-fuzz.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/firebase.messaging"}"#
            )
            var signed = header + "." + claims + ".AAAA"
            if let key = grantAccount?.key,
                let signature = try? key.signature(for: Data((header + "." + claims).utf8), padding: .insecurePKCS1v1_5)
            {
                signed = header + "." + claims + "." + signature.rawRepresentation.base64URLEncodedString()
            }
            let grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
            return [grant + signed, grant + header + "." + claims + ".", "grant_type=password", "assertion=a.b.c&&=", "%zz"]
                .map { Array($0.utf8) }
        },
        run: { input in
            guard let (account, _) = grantAccount else { return }
            let outcome = Result { () throws(FCMOAuthError) in
                try FCMTokenGrant(
                    formBody: Data(input), account: { $0 == account.clientEmail ? account : nil },
                    now: Date(timeIntervalSince1970: 1_800_000_100))
            }
            switch outcome {
            case .success(let grant):
                try require(grant.account == account, "granted to another account")
                try require(!grant.scopes.isEmpty, "granted with no scope")
            case .failure(let error):
                try require(error.httpStatus == 400, "refused with \(error.httpStatus)")
                try require(error.body["error"] == .string(error.code.rawValue), "a body that does not name its error")
            }
        })
}
