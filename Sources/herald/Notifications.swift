import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import Logging
import UserNotifications

extension HeraldCommand {
    /// Inspects and changes apps' local notifications, as the person holding the device would.
    struct Notifications: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List apps' notifications, change their authorization, or schedule one.",
            subcommands: [List.self, Allow.self, Deny.self, Reset.self, Send.self]
        )
    }
}

/// Opens the engine of a data directory without running its scheduler (a `herald up` or the app fires).
func openEngine(_ data: DataDirectoryOptions) throws -> NotificationEngine {
    let directory = data.directory
    do {
        // Content extensions decide about the actions `herald respond` picks, as they do for the person on a device.
        let logger = Logger(label: "herald")
        return try NotificationEngine.forDataDirectory(
            directory, presenter: SilentPresenter(), scope: nil, contentExtensions: ContentExtensionHost(logger: logger),
            logger: logger)
    } catch {
        throw ValidationError.cannotOpen(directory.notificationDatabase, error)
    }
}

/// The person changes an app's decision, as in Settings, and the command says what it now is.
func changeDecision(
    _ data: DataDirectoryOptions, _ bundleIdentifier: String, to status: UNAuthorizationStatus,
    options: UNAuthorizationOptions, _ outcome: String
) async throws {
    try await NotificationChanges(data).apply(
        .setAuthorization(status: status.rawValue, options: options.rawValue), for: bundleIdentifier)
    print("\(bundleIdentifier): \(outcome)")
}

extension HeraldCommand.Notifications {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show each app's authorization, badge, pending and delivered notifications.")

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "Only this app (bundle identifier).") var bundleIdentifier: String?
        @OptionGroup var output: JSONOutputOptions

        func run() async throws {
            let engine = try openEngine(data)
            var apps = [String]()
            if let bundleIdentifier {
                apps = [bundleIdentifier]
            } else {
                apps = try await engine.bundleIdentifiers().sorted()
            }
            if output.json {
                // What GET /api/v1/notifications answers, both lists: each app's delivered, then its pending ones.
                let device = EngineTestBedDevice(engine: engine, directory: data.directory, changes: DeviceChanges())
                var listed: [JSONValue] = []
                for app in apps {
                    for list in TestBedNotification.List.allCases {
                        listed += try await device.notifications(of: app, in: list).map(\.json)
                    }
                }
                output.print(.members(["notifications": .array(listed), "complete": true]))
                return
            }
            if apps.isEmpty { print("No apps have used notifications in \(data.directory.url.path) yet.") }
            let formatter = ISO8601DateFormatter()
            for app in apps {
                let state = try await engine.appState(for: app)
                let pending = try await engine.pending(for: app)
                let delivered = try await engine.delivered(for: app)
                print("\(app)  authorization: \(state.settings.authorizationStatus)  badge: \(state.badgeCount)")
                for item in pending {
                    let when = item.nextFireDate.map { formatter.string(from: $0) } ?? "on location"
                    print("  pending    \(item.request.identifier)  \(when)  \(Self.summary(of: item.request.content))")
                }
                for item in delivered {
                    print(
                        "  delivered  \(item.request.identifier)  \(formatter.string(from: item.date))  \(Self.summary(of: item.request.content))"
                    )
                }
            }
        }

        /// What a line shows of a notification: its title, else its body (a body-only notification is common), else
        /// its subtitle.
        static func summary(of content: NotificationContentRecord) -> String {
            [content.title, content.body, content.subtitle].first { !$0.isEmpty } ?? ""
        }
    }

    struct Allow: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Allow an app's notifications (alerts, sounds, badges), as in Settings.")

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String

        func run() async throws {
            try await changeDecision(
                data, bundleIdentifier, to: .authorized, options: [.alert, .sound, .badge], "notifications allowed")
        }
    }

    struct Deny: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn an app's notifications off, as in Settings.")

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String

        func run() async throws {
            try await changeDecision(data, bundleIdentifier, to: .denied, options: [], "notifications denied")
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget an app's decision: its next request asks again.")

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String

        func run() async throws {
            try await changeDecision(data, bundleIdentifier, to: .notDetermined, options: [], "authorization not determined")
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Schedule a local notification for an app, as the app's own code would.",
            discussion:
                "`herald up` or `herald device` (or the app, while it runs alone) fires it. Allows the app's notifications if it never asked."
        )

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String
        @Option(help: "The title.") var title: String = ""
        @Option(help: "The subtitle.") var subtitle: String = ""
        @Option(help: "The body.") var body: String = ""
        @Option(help: "The request identifier (default: a new UUID).") var identifier: String?
        @Option(name: .customLong("in"), help: "Seconds until it fires (default: now).") var seconds: Double?
        @Option(help: "The badge number.") var badge: Int?
        @Flag(help: "Play the default sound.") var sound = false
        @Option(help: "The category identifier.") var category: String?

        func validate() throws {
            if title.isEmpty && subtitle.isEmpty && body.isEmpty && badge == nil && !sound {
                throw ValidationError("Nothing to show: give --title, --subtitle, --body, --badge or --sound.")
            }
            if let seconds, !(seconds.isFinite && seconds > 0) {
                throw ValidationError(
                    "--in must be a finite number of seconds greater than 0 (leave it out to deliver now); got \(seconds).")
            }
        }

        func run() async throws {
            let changes = NotificationChanges(data)
            let engine = try changes.localEngine()
            if try await engine.appState(for: bundleIdentifier).settings.authorizationStatus == .notDetermined {
                let options: UNAuthorizationOptions = [.alert, .sound, .badge]
                try await changes.apply(
                    .setAuthorization(status: UNAuthorizationStatus.authorized.rawValue, options: options.rawValue),
                    for: bundleIdentifier)
            }
            let content = UNMutableNotificationContent()
            content.title = title
            content.subtitle = subtitle
            content.body = body
            content.badge = badge.map { NSNumber(value: $0) }
            content.sound = sound ? .default : nil
            content.categoryIdentifier = category ?? ""
            let trigger = seconds.map { UNTimeIntervalNotificationTrigger(timeInterval: $0, repeats: false) }
            let request = UNNotificationRequest(identifier: identifier ?? UUID().uuidString, content: content, trigger: trigger)
            // A running device daemon adds it (and schedules it at once); else the app finds it in the store.
            try await changes.apply(.add(request.makeRecord()), for: bundleIdentifier)
            // B-5: an add for an app whose notifications are off completes, and nothing is scheduled. (Whether it is
            // still pending says nothing: a running daemon may have fired it already.)
            let allowed = try await engine.appState(for: bundleIdentifier).settings.authorizationStatus != .denied
            // B-18, B-19: with 64 pending that all fire sooner, the new one is discarded, silently for the app; the
            // person at the terminal is told.
            if allowed, trigger != nil {
                let pending = try await engine.pending(for: bundleIdentifier)
                if pending.count >= 64, !pending.contains(where: { $0.request.identifier == request.identifier }) {
                    print(
                        "\(bundleIdentifier): not scheduled — the app has 64 pending requests that all fire sooner (iOS keeps the 64 soonest and drops the rest without telling the app)"
                    )
                    return
                }
            }
            print(
                allowed
                    ? "\(bundleIdentifier): scheduled \(request.identifier)\(seconds.map { " in \($0) s" } ?? " now")"
                    : "\(bundleIdentifier): not scheduled (notifications are denied for this app)")
        }
    }
}
