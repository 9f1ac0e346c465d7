import ArgumentParser
import Foundation
import HeraldConsole
import HeraldGateway

extension HeraldCommand {
    /// Manages the console's operator tokens.
    struct Console: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make and revoke the console's operator tokens.",
            discussion: """
                The console (herald gateway --console-port, herald up) lets only a person with an operator token in. The \
                console's store keeps each token's SHA-256, never the token: keep what `token` prints. A token lets its \
                holder in for 30 days from when it was made.
                """,
            subcommands: [Token.self, Revoke.self])

        struct Token: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Make an operator token and print it.")
            @OptionGroup var store: GatewayStoreOptions

            func run() async throws {
                let token = OperatorToken.make()
                try await store.withConsoleStore { store in
                    try await store.addOperatorToken(OperatorTokenRecord(hash: OperatorToken.hash(token), createdAt: Date()))
                }
                print(token)
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke an operator token (or every one): its sessions end at their next request.")
            @OptionGroup var store: GatewayStoreOptions
            @Argument(help: "The token, as `herald console token` printed it.") var token: String?
            @Flag(help: "Revoke every operator token.") var all = false

            func validate() throws {
                if (token == nil) == !all { throw ValidationError("Give the token to revoke, or --all.") }
            }

            func run() async throws {
                let hash = token.map(OperatorToken.hash)
                try await store.withConsoleStore(existing: true) { store in
                    // Revoking twice is no mistake: say so, with when it was; an unknown token is one.
                    if let hash {
                        guard let record = try await store.operatorToken(hash: hash) else {
                            throw CommandFailure(
                                "No such operator token: herald console token makes one (revoke --all revokes every one).")
                        }
                        if let revokedAt = record.revokedAt {
                            print("That operator token was already revoked, at \(revokedAt.formatted(.iso8601)).")
                            return
                        }
                    }
                    let revoked = try await store.revokeOperatorTokens(hash: hash, at: Date())
                    print("Revoked \(revoked) operator token\(revoked == 1 ? "" : "s").")
                }
            }
        }
    }
}
