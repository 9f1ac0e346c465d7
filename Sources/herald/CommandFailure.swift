/// A command that cannot go on: one line that says what to fix (no usage text, exit 1).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
