import ArgumentParser

@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Apple's user-notification system, self-hosted: local notifications and an APNs-compatible gateway.",
        version: "0.1.0",
        subcommands: [
            Up.self, Gateway.self, Device.self, Keys.self, Tokens.self, Channels.self, Activities.self, Console.self,
            Certificates.self, FCM.self, Push.self, JWT.self, Log.self, Deliveries.self, Notifications.self, Respond.self,
            Settings.self,
            Simulate.self,
            Location.self, Focus.self, Widgets.self, WebPush.self,
        ]
    )
}
