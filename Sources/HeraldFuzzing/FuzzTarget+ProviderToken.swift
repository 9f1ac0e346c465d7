import Crypto
import Foundation
import HeraldCore

extension FuzzTarget {
    /// The provider key every seed token is signed with (fixed, so that seeds reach the signature check).
    static let tokenKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32))

    /// Provider tokens (A-01…A-08): a compact JWT's header, claims and signature, parsed then verified.
    static let providerToken = FuzzTarget(
        name: "provider-token",
        summary: "provider tokens (JWT): base64url header, claims and signature, parsing and ES256 verification",
        seeds: {
            let issued = Date(timeIntervalSince1970: 1_700_000_000)
            let signed =
                (try? ProviderToken.sign(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: issued, privateKey: tokenKey)) ?? ""
            let header = Data(#"{"alg":"ES256","kid":"KEY1234567"}"#.utf8).base64URLEncodedString()
            let stringIat = Data(#"{"iss":"TEAM123456","iat":"1700000000","kid":"KEY1234567"}"#.utf8).base64URLEncodedString()
            return [signed, header + "." + stringIat + ".AAAA", "a.b.c", "..", header + ".e30.", signed + "x"].map {
                Array($0.utf8)
            }
        },
        run: { input in
            guard let token = try? ProviderToken(parsing: input.text) else { return }
            try require(!token.keyID.isEmpty && !token.teamID.isEmpty, "parsed a token without kid or iss")
            try require(token.issuedAt.timeIntervalSince1970.isFinite, "parsed a token with an infinite iat")
            for now in [token.issuedAt, Date(timeIntervalSince1970: 1_700_000_000)] {
                do throws(ProviderToken.Failure) {
                    try token.validate(with: tokenKey.publicKey, now: now)
                } catch {
                    try require(error.reason.status == 403, "refused with status \(error.reason.status)")
                }
            }
        })
}
