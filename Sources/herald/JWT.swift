import ArgumentParser
import HeraldProvider

extension HeraldCommand {
    /// Prints a provider token for curl and other clients.
    struct JWT: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "jwt",
            abstract: "Print a provider token (ES256 JWT) to use as `authorization: bearer …`; valid one hour.")
        @OptionGroup var credentials: ProviderCredentialOptions

        func run() async throws {
            print(try await credentials.signer().token())
        }
    }
}
