import ArgumentParser

/// Herald's benchmarks, each with a reference measured in the same run: `herald-bench scheduler|gateway|provider|…|scale`.
///
/// A separate executable from `herald`, so that the shipped command links only what it runs.
@main
struct HeraldBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-bench",
        abstract: "Measure Herald against a reference measured in the same run. Build with -c release.",
        version: "0.1.0",
        subcommands: [
            Scheduler.self, Gateway.self, Provider.self, EndToEnd.self, ServiceExtension.self, Soak.self, Limits.self, Scale.self,
            Broadcast.self, BroadcastDevices.self, Idle.self, IdleDevices.self, IdleReference.self, FCM.self,
            WebPush.self, TestBed.self, TestBedClients.self,
        ]
    )
}
