import ArgumentParser

extension HeraldCommand {
    /// Benchmarks, with a reference measured in the same run.
    struct Bench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure Herald against a reference measured in the same run.",
            subcommands: [Scheduler.self, Gateway.self, Provider.self]
        )
    }
}
