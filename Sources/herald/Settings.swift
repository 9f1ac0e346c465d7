import ArgumentParser
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import UserNotifications

extension HeraldCommand {
    /// Shows or changes an app's notification settings, as the person would in the Settings app.
    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change an app's notification settings, as in the Settings app.",
            discussion: """
                Without options it prints the settings the app's getNotificationSettings sees. --allow and --deny \
                change the decision; --alerts, --sounds, --badges, --list, --lock-screen, --time-sensitive and --summary turn one setting on or \
                off (the last two are read by Focus and the scheduled summary: herald focus --help); \
                for a provisionally authorized app, --keep prominently|quietly and --turn-off are the Keep… and Turn \
                Off… buttons of a quiet notification. A notification delivered after the change follows it.
                """)

        /// A switch in Settings.
        enum Switch: String, ExpressibleByArgument, CaseIterable {
            case on, off
            var setting: UNNotificationSetting { self == .on ? .enabled : .disabled }
        }

        /// Keep…: how a provisionally authorized app's notifications are delivered from now on.
        enum Keep: String, ExpressibleByArgument, CaseIterable {
            /// "Deliver Prominently": banners, sounds and badges.
            case prominently
            /// "Deliver Quietly": Notification Center only.
            case quietly
        }

        /// Alert style: how a notification shows while the app is not in front.
        enum Style: String, ExpressibleByArgument, CaseIterable {
            case none, banner, alert
            var style: UNAlertStyle {
                switch self {
                case .none: .none
                case .banner: .banner
                case .alert: .alert
                }
            }
        }

        /// Location Services for the app (Settings → Privacy).
        enum LocationAccess: String, ExpressibleByArgument, CaseIterable {
            case never
            case whenInUse = "when-in-use"
            case always
            var status: CLAuthorizationStatus {
                switch self {
                case .never: .denied
                case .whenInUse: .authorizedWhenInUse
                case .always: .authorizedAlways
                }
            }
        }

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String
        @OptionGroup var output: JSONOutputOptions
        @Flag(help: "Allow notifications (alerts, sounds, badges).") var allow = false
        @Flag(help: "Turn notifications off.") var deny = false
        @Option(help: "Banners: on or off.") var alerts: Switch?
        @Option(help: "Sounds: on or off.") var sounds: Switch?
        @Option(help: "Badges: on or off.") var badges: Switch?
        @Option(help: "Show in Notification Center: on or off.") var list: Switch?
        @Option(help: "Show on the lock screen: on or off.") var lockScreen: Switch?
        @Option(help: "Keep a provisional app's notifications: prominently or quietly.") var keep: Keep?
        @Flag(help: "Turn Off a provisional app's notifications.") var turnOff = false
        @Option(
            help:
                "Alert style: none, banner or alert (an alert shows all of an iOS 8 category's actions, a banner those of its minimal context)."
        )
        var style: Style?
        @Option(help: "Location access: never, when-in-use or always (location triggers need when-in-use).")
        var location: LocationAccess?
        @Option(help: "Time Sensitive notifications: on or off (off: a Focus holds them like active ones).")
        var timeSensitive: Switch?
        @Option(help: "Scheduled summary: on or off (on: passive and active notifications wait for its times).")
        var summary: Switch?

        private var changesSwitches: Bool {
            alerts != nil || sounds != nil || badges != nil || list != nil || lockScreen != nil || style != nil
                || timeSensitive != nil || summary != nil
        }

        func validate() throws {
            let decisions = [allow, deny, keep != nil, turnOff].filter { $0 }.count
            if decisions > 1 {
                throw ValidationError("Give one of --allow, --deny, --keep and --turn-off.")
            }
        }

        func run() async throws {
            let changes = NotificationChanges(data)
            let engine = try changes.localEngine()
            func decide(_ status: UNAuthorizationStatus, _ options: UNAuthorizationOptions) async throws {
                try await changes.apply(
                    .setAuthorization(status: status.rawValue, options: options.rawValue), for: bundleIdentifier)
            }
            let status = try await engine.appState(for: bundleIdentifier).settings.authorizationStatus
            if keep != nil || turnOff {
                guard status == .provisional else {
                    throw ValidationError(
                        "\(bundleIdentifier) is \(Self.name(status)), not provisional: Keep… and Turn Off… are for quiet notifications. Use --allow or --deny."
                    )
                }
            }
            if allow { try await decide(.authorized, [.alert, .sound, .badge]) }
            if deny || turnOff { try await decide(.denied, []) }
            if let keep {
                try await decide(.authorized, keep == .prominently ? [.alert, .sound, .badge] : [])
                if keep == .quietly {
                    var list = SettingsChange()
                    list.notificationCenterSetting = .enabled
                    try await changes.apply(.changeSettings(list), for: bundleIdentifier)
                }
            }
            if changesSwitches {
                let now = try await engine.appState(for: bundleIdentifier).settings
                guard now.allowsDelivery else {
                    throw ValidationError(
                        "\(bundleIdentifier)'s notifications are \(Self.name(now.authorizationStatus)); allow them first (--allow)."
                    )
                }
                var settings = SettingsChange()
                if let alerts {
                    settings.alertSetting = alerts.setting
                    settings.alertStyle = alerts == .on ? .banner : UNAlertStyle.none
                }
                settings.soundSetting = sounds?.setting
                settings.badgeSetting = badges?.setting
                settings.notificationCenterSetting = list?.setting
                settings.lockScreenSetting = lockScreen?.setting
                settings.timeSensitiveSetting = timeSensitive?.setting
                settings.scheduledDeliverySetting = summary?.setting
                if let style {
                    settings.alertStyle = style.style
                    settings.alertSetting = style == .none ? .disabled : .enabled
                }
                try await changes.apply(.changeSettings(settings), for: bundleIdentifier)
            }
            if let location {
                try await changes.apply(.setLocationAuthorization(status: location.status.rawValue), for: bundleIdentifier)
            }
            let state = try await engine.appState(for: bundleIdentifier)
            if output.json {
                output.print(Self.json(state.settings, location: state.locationAuthorizationStatus, of: bundleIdentifier))
                return
            }
            print(Self.describe(state.settings, of: bundleIdentifier))
            print("  location: \(Self.name(state.locationAuthorizationStatus))")
        }

        /// The settings as `--json` prints them: `UNNotificationSettings`' property names and its enumerations' case
        /// names, and Core Location's `authorizationStatus`.
        static func json(
            _ settings: NotificationSettingsRecord, location: CLAuthorizationStatus, of bundleIdentifier: String
        ) -> JSONValue {
            func name(_ setting: UNNotificationSetting) -> JSONValue {
                switch setting {
                case .enabled: "enabled"
                case .disabled: "disabled"
                case .notSupported: "notSupported"
                @unknown default: "notSupported"
                }
            }
            let authorization: String =
                switch settings.authorizationStatus {
                case .notDetermined: "notDetermined"
                case .denied: "denied"
                case .authorized: "authorized"
                case .provisional: "provisional"
                case .ephemeral: "ephemeral"
                @unknown default: "notDetermined"
                }
            let style: String =
                switch settings.alertStyle {
                case .none: "none"
                case .banner: "banner"
                case .alert: "alert"
                }
            let locationName: String =
                switch location {
                case .notDetermined: "notDetermined"
                case .restricted: "restricted"
                case .denied: "denied"
                case .authorizedAlways: "authorizedAlways"
                case .authorizedWhenInUse: "authorizedWhenInUse"
                }
            return .object([
                .init("bundleID", .string(bundleIdentifier)), .init("authorizationStatus", .string(authorization)),
                .init("alertSetting", name(settings.alertSetting)), .init("alertStyle", .string(style)),
                .init("soundSetting", name(settings.soundSetting)), .init("badgeSetting", name(settings.badgeSetting)),
                .init("notificationCenterSetting", name(settings.notificationCenterSetting)),
                .init("lockScreenSetting", name(settings.lockScreenSetting)),
                .init("timeSensitiveSetting", name(settings.timeSensitiveSetting)),
                .init("scheduledDeliverySetting", name(settings.scheduledDeliverySetting)),
                .init("criticalAlertSetting", name(settings.criticalAlertSetting)),
                .init("locationAuthorizationStatus", .string(locationName)),
            ])
        }

        /// The settings as lines, e.g. `alerts: on (banner)`.
        static func describe(_ settings: NotificationSettingsRecord, of bundleIdentifier: String) -> String {
            func word(_ setting: UNNotificationSetting) -> String {
                switch setting {
                case .enabled: "on"
                case .disabled: "off"
                case .notSupported: "not supported"
                @unknown default: "unknown"
                }
            }
            let style =
                switch settings.alertStyle {
                case .none: "none"
                case .banner: "banner"
                case .alert: "alert"
                }
            return """
                \(bundleIdentifier)
                  authorization: \(name(settings.authorizationStatus))
                  alerts: \(word(settings.alertSetting)) (style \(style))
                  sounds: \(word(settings.soundSetting))
                  badges: \(word(settings.badgeSetting))
                  Notification Center: \(word(settings.notificationCenterSetting))
                  lock screen: \(word(settings.lockScreenSetting))
                  time sensitive: \(settings.timeSensitiveSetting == .disabled ? "off" : "on")
                  scheduled summary: \(settings.scheduledDeliverySetting == .enabled ? "on" : "off")
                  critical alerts: \(word(settings.criticalAlertSetting))
                """
        }

        static func name(_ status: CLAuthorizationStatus) -> String {
            switch status {
            case .notDetermined: "not determined"
            case .restricted: "restricted"
            case .denied: "never"
            case .authorizedAlways: "always"
            case .authorizedWhenInUse: "when in use"
            }
        }

        static func name(_ status: UNAuthorizationStatus) -> String {
            switch status {
            case .notDetermined: "not determined"
            case .denied: "denied"
            case .authorized: "authorized"
            case .provisional: "provisional"
            case .ephemeral: "ephemeral"
            @unknown default: "unknown"
            }
        }
    }
}
