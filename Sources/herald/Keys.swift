import ArgumentParser
import Crypto
import Foundation
import HeraldConsole
import HeraldCore
import HeraldGateway
import Logging

extension HeraldCommand {
    /// Manages provider signing keys (token-based authentication).
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, import and list provider signing keys (.p8, ES256) the gateway accepts.",
            subcommands: [Create.self, Import.self, List.self]
        )

        struct KeyScope: ParsableArguments {
            @Option(help: "Restrict the key to one environment (development or production); default both.")
            var environment: APNsEnvironment?
            @Option(name: .customLong("topic"), help: "Restrict the key to these bundle IDs (repeatable); default all.")
            var topics: [String] = []

            func validate() throws {
                for topic in topics where !APNsRequestHeaders.isValidTopic(topic) {
                    throw ValidationError(
                        "--topic \(topic) is not a bundle ID: letters, digits, hyphens and dots, such as com.example.app.")
                }
            }
        }

        /// The characters of Apple's team and key IDs.
        static let identityCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

        /// Checks a team or key ID as Apple makes them: 10 characters, uppercase letters and digits.
        ///
        /// - Parameters:
        ///   - value: The ID.
        ///   - option: The option that gave it (`--team-id`, `--key-id`).
        static func checkIdentity(_ value: String, option: String) throws {
            guard value.count == 10, value.allSatisfy(identityCharacters.contains) else {
                throw ValidationError(
                    "\(option) \(value.isEmpty ? "is empty" : "\(value) is not one"): Apple's team and key IDs are 10 characters, uppercase letters and digits (such as ABCDE12345)."
                )
            }
        }

        /// What `--replace` says, in `create` and `import`.
        static let replaceHelp: ArgumentHelp =
            "Register it in place of the key with this key ID (a running gateway takes the new one within 5 s; providers signing with the old key then get 403 InvalidProviderToken)."

        /// Refuses a key ID that is registered already, unless `replace` says to register the new key in its place.
        static func refuseRegistered(_ keyID: String, replace: Bool, in store: any ProviderKeyStore) async throws {
            guard !replace, let existing = try await store.providerKey(id: keyID) else { return }
            throw ValidationError(
                "Key ID \(keyID) is registered already (team \(existing.teamID)): give another --key-id, or --replace to register this key in its place."
            )
        }

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Write a new Apple-style PKCS#8 ES256 key (.p8) and register its public half.")
            @OptionGroup var store: GatewayStoreOptions
            @Option(help: "Your team ID (the JWT's iss).") var teamID: String
            @Option(help: "The key ID (the JWT's kid); default: 10 random characters.") var keyID: String?
            @Option(help: "Where to write the private key (.p8).") var out: String
            @OptionGroup var scope: KeyScope
            @Flag(help: Keys.replaceHelp) var replace = false

            func validate() throws {
                try Keys.checkIdentity(teamID, option: "--team-id")
                if let keyID { try Keys.checkIdentity(keyID, option: "--key-id") }
            }

            func run() async throws {
                let keyID = self.keyID ?? Self.randomKeyID()
                let url = URL(fileURLWithPath: out)
                guard !FileManager.default.fileExists(atPath: url.path) else {
                    throw ValidationError("\(out) exists; choose another --out or remove it first.")
                }
                try await store.withStore { (store: any ProviderKeyStore) in
                    try await Keys.refuseRegistered(keyID, replace: replace, in: store)
                    try await store.createProviderKey(
                        keyID: keyID, teamID: teamID, environment: scope.environment, topics: scope.topics, file: url,
                        replacingFile: false)
                }
                print("Wrote \(url.path)")
                print("key id:  \(keyID)")
                print("team id: \(teamID)")
            }

            static func randomKeyID() -> String {
                String((0..<10).map { _ in Keys.identityCharacters.randomElement()! })
            }
        }

        struct Import: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Register an existing key: a .p8 private key (only its public half is kept) or a public key PEM.")
            @OptionGroup var store: GatewayStoreOptions
            @Option(help: "The team ID (iss).") var teamID: String
            @Option(help: "The key ID (kid).") var keyID: String
            @Argument(help: "The .p8 (PKCS#8 PEM) or public key PEM file.") var file: String
            @OptionGroup var scope: KeyScope
            @Flag(help: Keys.replaceHelp) var replace = false

            func validate() throws {
                try Keys.checkIdentity(teamID, option: "--team-id")
                try Keys.checkIdentity(keyID, option: "--key-id")
            }

            func run() async throws {
                // Blank lines around the PEM block are not part of it (openssl reads such a file too).
                let text = try await InputFile.text(file, option: "the key").trimmingCharacters(in: .whitespacesAndNewlines)
                let publicKey: P256.Signing.PublicKey
                if let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: text) {
                    publicKey = privateKey.publicKey
                } else if let key = try? P256.Signing.PublicKey(pemRepresentation: text) {
                    publicKey = key
                } else {
                    throw ValidationError("\(file) is not a P-256 (ES256) private or public key in PEM form.")
                }
                try await store.withStore { (store: any ProviderKeyStore) in
                    try await Keys.refuseRegistered(keyID, replace: replace, in: store)
                    try await store.saveProviderKey(
                        ProviderKeyRecord(
                            keyID: keyID, teamID: teamID, publicKeyPEM: publicKey.pemRepresentation,
                            environment: scope.environment, topics: scope.topics, createdAt: Date()))
                }
                print("Registered key \(keyID) for team \(teamID)")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the registered keys.")
            @OptionGroup var store: GatewayStoreOptions
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                let keys = try await store.withExistingStore { (store: any ProviderKeyStore) in try await store.providerKeys() }
                // Which .p8 in the data directory signs for each key now (after a --replace, the new one).
                var files: [String: String] = [:]
                let candidates = await ProviderKeyRecord.p8Files(in: store.directory.url)
                for key in keys { files[key.keyID] = await key.keyFile(among: candidates) }
                if output.json {
                    output.print(
                        .members([
                            "keys": .array(
                                keys.map { key in
                                    .members([
                                        "keyID": .string(key.keyID), "teamID": .string(key.teamID),
                                        "environment": key.environment.map { .string($0.rawValue) },
                                        "topics": .array(key.topics.map(JSONValue.string)),
                                        "createdAt": .time(key.createdAt),
                                        "file": files[key.keyID].map(JSONValue.string),
                                    ])
                                })
                        ]))
                    return
                }
                if keys.isEmpty {
                    print("No provider keys. `herald keys create --team-id <your team ID> --out key.p8` makes one.")
                }
                for key in keys {
                    let environment = key.environment?.rawValue ?? "development+production"
                    let topics = key.topics.isEmpty ? "all topics" : key.topics.joined(separator: ",")
                    let file = files[key.keyID].map { "file \($0)" } ?? "its .p8 is not in the data directory"
                    print(
                        "\(key.keyID)  team \(key.teamID)  \(environment)  \(topics)  registered \(key.createdAt.formatted(.iso8601))  \(file)"
                    )
                }
            }
        }
    }
}

extension APNsEnvironment: ExpressibleByArgument {}

/// Opens the gateway store in the data directory, with a message that says what to do when it cannot.
///
/// - Parameter logger: Where the quarantine of a damaged database is reported.
func openGatewayStore(
    _ data: DataDirectoryOptions, logger: Logger = Logger(label: "herald.gateway.store")
) throws -> SQLiteGatewayStore {
    let directory = data.directory
    do {
        try directory.create()
        try ValidationError.requireWritable(directory.gatewayDatabase)
        return try SQLiteGatewayStore(url: directory.gatewayDatabase, logger: logger)
    } catch {
        throw ValidationError.cannotOpen(directory.gatewayDatabase, error)
    }
}
