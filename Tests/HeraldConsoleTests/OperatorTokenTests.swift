import HeraldConsole
import Testing

/// What `herald console token` prints.
@Suite struct OperatorTokenTests {
    @Test(
        "A token is 43 base64url characters and never starts with '-', so it can be given to a command as an argument (1 in 64 did, and `herald console revoke` read it as an option)"
    )
    func tokensAreArguments() {
        let tokens = (0..<10_000).map { _ in OperatorToken.make() }
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(tokens.allSatisfy { $0.count == 43 && $0.allSatisfy(alphabet.contains) })
        #expect(!tokens.contains { $0.hasPrefix("-") })
        #expect(Set(tokens).count == tokens.count)
    }
}
