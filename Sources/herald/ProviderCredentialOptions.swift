import ArgumentParser
import Foundation
import HeraldCore
import HeraldProvider

/// Where provider credentials come from: options, else environment variables, else a credentials file — the last
/// two keep them out of shell history.
struct ProviderCredentialOptions: ParsableArguments {
    @Option(help: "The .p8 key file (or HERALD_P8).") var p8: String?
    @Option(help: "The key's ID (or HERALD_KEY_ID).") var keyId: String?
    @Option(help: "The team ID (or HERALD_TEAM_ID).") var teamId: String?
    @Option(
        name: .customLong("credentials"),
        help: """
            A credentials file (or HERALD_CREDENTIALS; default ~/.config/herald/credentials when it exists) with \
            lines `p8 = AuthKey_ABC123.p8`, `key-id = ABC123`, `team-id = TEAM123456` or `cert = client.pem`; \
            paths are relative to the file.
            """)
    var credentialsFile: String?

    /// What one place (options, environment, file) says.
    struct Source {
        var name: String
        var p8: String?
        var keyID: String?
        var teamID: String?
        var cert: String?
    }

    /// The places credentials come from, most important first.
    ///
    /// - Parameter cert: The command's `--cert` option, if it has one.
    func sources(cert: String? = nil) async throws -> [Source] {
        let environment = ProcessInfo.processInfo.environment
        var sources = [
            Source(name: "options", p8: p8, keyID: keyId, teamID: teamId, cert: cert),
            Source(
                name: "environment", p8: environment["HERALD_P8"], keyID: environment["HERALD_KEY_ID"],
                teamID: environment["HERALD_TEAM_ID"], cert: environment["HERALD_CERT"]),
        ]
        if let file = try await fileSource(environment: environment) { sources.append(file) }
        return sources
    }

    /// The authentication the options, environment or credentials file name: the first of them that names a key
    /// or a certificate decides.
    ///
    /// - Parameter cert: The command's `--cert` option.
    func authentication(cert: String?) async throws -> APNsAuthentication {
        let sources = try await sources(cert: cert)
        guard let decisive = sources.first(where: { $0.p8 != nil || $0.cert != nil }) else {
            throw ValidationError(Self.missing)
        }
        if decisive.p8 != nil && decisive.cert != nil {
            throw ValidationError("The \(decisive.name) give both a .p8 key and a certificate; keep one.")
        }
        if let path = decisive.cert {
            let pem = try await InputFile.text(path, option: "--cert")
            guard pem.contains("BEGIN CERTIFICATE"), pem.contains("PRIVATE KEY") else {
                throw CommandFailure(
                    "\(path) must hold a PEM certificate and its private key (herald certificates create writes one).")
            }
            return .certificate(certificatePEM: pem, privateKeyPEM: pem)
        }
        return .token(try await signer(sources: sources))
    }

    /// The token signer the options, environment or credentials file describe.
    func signer() async throws -> ProviderTokenSigner {
        try await signer(sources: try await sources())
    }

    private func signer(sources: [Source]) async throws -> ProviderTokenSigner {
        guard let path = sources.lazy.compactMap(\.p8).first, let keyID = sources.lazy.compactMap(\.keyID).first,
            let teamID = sources.lazy.compactMap(\.teamID).first
        else {
            // A provider token is signed with a .p8 key: a certificate makes none (`herald jwt` has no --cert).
            throw ValidationError(Self.missingKey)
        }
        let pem = try await InputFile.text(path, option: "the key")
        do {
            return try ProviderTokenSigner(pem: pem, keyID: keyID, teamID: teamID)
        } catch {
            throw CommandFailure("\(path) is not a P-256 private key in PEM (Apple's AuthKey_<KEYID>.p8).")
        }
    }

    private static let missingKey = """
        Give --p8 FILE --key-id ID --team-id ID (or HERALD_P8, HERALD_KEY_ID, HERALD_TEAM_ID, or a --credentials file): \
        a provider token is signed with a .p8 key.
        """

    private static let missing = """
        Give --p8 FILE --key-id ID --team-id ID (or HERALD_P8, HERALD_KEY_ID, HERALD_TEAM_ID, or a --credentials file), \
        or --cert FILE.
        """

    /// Reads the credentials file: the one named, else the default one if it exists.
    private func fileSource(environment: [String: String]) async throws -> Source? {
        let named = credentialsFile ?? environment["HERALD_CREDENTIALS"]
        let path: String
        if let named {
            path = named
        } else {
            let configuration =
                environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
            path = configuration.appendingPathComponent("herald/credentials").path
            guard FileManager.default.fileExists(atPath: path) else { return nil }
        }
        let text = try await InputFile.text(path, option: "the credentials file")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolved(_ file: String) -> String {
            file.hasPrefix("/") ? file : folder.appendingPathComponent(file).path
        }
        var source = Source(name: "credentials file \(path)")
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.trimmingCharacters(in: .whitespaces)
            if content.isEmpty || content.hasPrefix("#") { continue }
            guard let equals = content.firstIndex(of: "=") else {
                throw CommandFailure("\(path):\(number + 1): expected `name = value`.")
            }
            let name = content[..<equals].trimmingCharacters(in: .whitespaces)
            var value = content[content.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            switch name {
            case "p8": source.p8 = resolved(value)
            case "key-id": source.keyID = value
            case "team-id": source.teamID = value
            case "cert": source.cert = resolved(value)
            default:
                throw CommandFailure("\(path):\(number + 1): unknown setting `\(name)`; use p8, key-id, team-id or cert.")
            }
        }
        return source
    }
}
