import ArgumentParser

@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Apple's user-notification system, self-hosted: local notifications today, push next.",
        version: "0.1.0",
        subcommands: [Up.self, Notifications.self, Location.self, Bench.self]
    )
}
