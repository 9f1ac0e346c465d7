import ArgumentParser
import HeraldProvider

extension HeraldCommand {
    /// Prints a provider token for curl and other clients.
    struct JWT: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "jwt",
            abstract: "Print a provider token (ES256 JWT) to use as `authorization: bearer …`; valid one hour.")
        @OptionGroup var credentials: ProviderCredentialOptions

        func run() throws {
            print(try credentials.signer().token())
        }
    }
}
