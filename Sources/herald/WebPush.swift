import ArgumentParser
import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

extension HeraldCommand {
    /// The device as a web app's user agent: its web push subscriptions.
    struct WebPush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webpush",
            abstract: "Subscribe web apps on this device to web push (RFC 8030), as a browser does for a page.",
            discussion: """
                The gateway is a web push service with Apple's rules (web.push.apple.com's): a subscription's endpoint \
                is https://<gateway device port>/push/<id>, and anything that sends web push (pywebpush, web-push, \
                an app server) sends to it with VAPID credentials. The device keeps the subscription's private keys, \
                decrypts each message and shows a Declarative Web Push message \
                ({"web_push":8030,"notification":{"title":…,"body":…,"navigate":…}}) as a notification of the web \
                app, with no browser and no service worker; other messages are logged as needing a service worker.
                """,
            subcommands: [Subscribe.self],
            defaultSubcommand: Subscribe.self)

        /// Makes a subscription and prints it.
        struct Subscribe: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Subscribe a web app and print its PushSubscription JSON (endpoint and keys), as toJSON() gives it.")

            @OptionGroup var data: DataDirectoryOptions
            @Argument(help: "The web app's origin, e.g. https://news.example.com.") var origin: String
            @Option(
                help: ArgumentHelp(
                    "The app server's VAPID public key, base64url (the page's applicationServerKey): only it may send.",
                    valueName: "key"))
            var applicationServerKey: String?
            @Option(help: "Also write the JSON to this file.") var output: String?

            func run() async throws {
                let output = self.output
                try await commandDevice(
                    .webPushSubscribe(origin: origin, applicationServerKey: applicationServerKey), data: data
                ) { status in
                    let json = status.webPushSubscription ?? "{}"
                    if let output {
                        do {
                            try Data((json + "\n").utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                        } catch {
                            return "\(json)\n(could not write \(output): \(error))"
                        }
                    }
                    return json
                }
            }
        }
    }
}
