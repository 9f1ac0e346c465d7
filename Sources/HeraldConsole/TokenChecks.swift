import Crypto
import Foundation
import HeraldCore
import HeraldGatewayStore

/// The console's tools, as Apple's Push Notifications Console has them: what is wrong with a provider token (JWT),
/// and what the gateway knows of a device token.
enum TokenChecks {
    /// One check of a provider token: its name, whether it passed, and why not.
    struct Check: Sendable {
        var name: String
        var passed: Bool
        var detail: String
    }

    /// Every check of a provider token, in the order the gateway makes them (A-01…A-05); the first that fails is why
    /// the gateway would refuse it.
    static func providerToken(
        _ text: String, gateway: any ConsoleGateway, now: Date
    ) async -> (checks: [Check], header: String, claims: String) {
        let compact = text.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "bearer ", with: "", options: [.caseInsensitive, .anchored])
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        let header = parts.count == 3 ? pretty(parts[0]) : ""
        let claims = parts.count == 3 ? pretty(parts[1]) : ""
        var checks: [Check] = []
        let token: ProviderToken
        do {
            token = try ProviderToken(parsing: compact)
            checks.append(Check(name: "Shape", passed: true, detail: "A JWT with an ES256 header, kid, iss and iat."))
        } catch .malformed(let why) {
            checks.append(Check(name: "Shape", passed: false, detail: "Not a provider token: \(why) (InvalidProviderToken)."))
            return (checks, header, claims)
        } catch {
            checks.append(Check(name: "Shape", passed: false, detail: "\(error)"))
            return (checks, header, claims)
        }
        guard let key = try? await gateway.providerKey(id: token.keyID) else {
            checks.append(
                Check(
                    name: "Key", passed: false,
                    detail: "No key \(token.keyID) on this gateway: add it with herald keys (InvalidProviderToken)."))
            return (checks, header, claims)
        }
        checks.append(Check(name: "Key", passed: true, detail: "Key \(key.keyID) is known."))
        checks.append(
            Check(
                name: "Team", passed: key.teamID == token.teamID,
                detail: key.teamID == token.teamID
                    ? "iss \(token.teamID) is the key's team."
                    : "iss \(token.teamID) is not the key's team \(key.teamID) (InvalidProviderToken)."))
        let lifetime = Double(ProviderToken.lifetime.components.seconds)
        let skew = Double(ProviderToken.clockSkew.components.seconds)
        let age = now.timeIntervalSince(token.issuedAt)
        let ageDetail: String
        if age > lifetime {
            ageDetail = "Issued \(Int(age)) s ago: older than an hour (ExpiredProviderToken); sign a new one."
        } else if -age > skew {
            ageDetail =
                "Issued \(Int(-age)) s in the future, more than the \(Int(skew)) s a clock may be ahead: check the provider's clock (InvalidProviderToken)."
        } else {
            ageDetail = "Issued \(Int(age)) s ago (valid for an hour)."
        }
        checks.append(Check(name: "Age", passed: age <= lifetime && -age <= skew, detail: ageDetail))
        guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM) else {
            checks.append(Check(name: "Signature", passed: false, detail: "The key on record cannot be read."))
            return (checks, header, claims)
        }
        let verified: Bool
        do {
            try token.validate(with: publicKey, now: token.issuedAt)
            verified = true
        } catch {
            verified = false
        }
        checks.append(
            Check(
                name: "Signature", passed: verified,
                detail: verified
                    ? "Signed with key \(key.keyID)."
                    : "The signature does not verify with key \(key.keyID) (InvalidProviderToken)."))
        return (checks, header, claims)
    }

    /// What the gateway knows of a device token: lines of label and value, or why it is not one of its tokens.
    static func deviceToken(_ text: String, gateway: any ConsoleGateway) async -> (known: Bool, facts: [(String, String)]) {
        let hex = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard DeviceToken(hex: hex) != nil else {
            return (false, [("Token", "Not a device token: an even number of hex digits (BadDeviceToken).")])
        }
        guard let record = try? await gateway.token(hex) else {
            return (false, [("Token", "This gateway did not issue it (BadDeviceToken): a push to it is refused.")])
        }
        let formatter = ISO8601DateFormatter()
        var facts: [(String, String)] = [
            ("App (topic)", record.bundleID),
            ("For", record.purpose == .app ? "the app's notifications" : "\(record.purpose)"),
            ("Environment", record.environment.rawValue),
            ("Device", record.deviceID),
            ("Issued", formatter.string(from: record.createdAt)),
        ]
        if let revoked = record.revokedAt {
            facts.append(("Revoked", "\(formatter.string(from: revoked)): pushes to it are answered 410 Unregistered"))
        } else {
            facts.append(("State", "active"))
        }
        return (true, facts)
    }

    /// A base64url JSON part, indented; the text as it came when it is not one.
    private static func pretty(_ part: Substring) -> String {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text), let object = try? JSONSerialization.jsonObject(with: data),
            let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return String(part) }
        return String(decoding: pretty, as: UTF8.self)
    }
}
