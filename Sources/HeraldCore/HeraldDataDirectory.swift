import Foundation

/// Where Herald keeps a user's durable state: notification databases, attachments, keys.
///
/// Resolution order, first match wins:
/// 1. an explicit path (a `--data-dir` option),
/// 2. the `HERALD_DATA_DIR` environment variable,
/// 3. `$XDG_DATA_HOME/herald`,
/// 4. `~/.local/share/herald`.
public struct HeraldDataDirectory: Sendable, Hashable {
    /// The directory's location.
    public let url: URL

    /// Creates a data directory at a known location; nothing is created on disk yet.
    ///
    /// - Parameter url: The directory.
    public init(url: URL) {
        self.url = url.standardizedFileURL
    }

    /// Resolves the data directory for this user.
    ///
    /// - Parameters:
    ///   - explicitPath: A path given on the command line, if any.
    ///   - environment: The process environment (injectable for tests).
    public static func resolve(
        explicitPath: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> HeraldDataDirectory {
        if let explicitPath, !explicitPath.isEmpty {
            return HeraldDataDirectory(url: URL(fileURLWithPath: explicitPath))
        }
        if let path = environment["HERALD_DATA_DIR"], !path.isEmpty {
            return HeraldDataDirectory(url: URL(fileURLWithPath: path))
        }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return HeraldDataDirectory(url: URL(fileURLWithPath: xdg).appendingPathComponent("herald"))
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return HeraldDataDirectory(
            url: URL(fileURLWithPath: home).appendingPathComponent(".local/share/herald")
        )
    }

    /// The SQLite database holding every app's local-notification state for this user.
    public var notificationDatabase: URL { url.appendingPathComponent("notifications.sqlite") }

    /// The SQLite database of the device's Live Activities (the device daemon's `LiveActivityRegistry`).
    public var liveActivitiesDatabase: URL { url.appendingPathComponent("live-activities.sqlite") }

    /// The SQLite database of VoIP pushes kept for apps until their `PKPushRegistry` takes them.
    public var pushKitDatabase: URL { url.appendingPathComponent("pushkit.sqlite") }
    /// The apps' widgets and controls (WidgetKit): their kinds, latest timelines and pending reloads.
    public var widgetsDatabase: URL { url.appendingPathComponent("widgets.sqlite") }
    /// The web apps' push subscriptions on this device (Web Push): their origins and private keys.
    public var webPushDatabase: URL { url.appendingPathComponent("webpush.sqlite") }
    /// The Linux apps registered with the device's UnifiedPush distributor, and their messages not yet given to them.
    public var unifiedPushDatabase: URL { url.appendingPathComponent("unifiedpush.sqlite") }
    /// The device's delivery rules: the pushes they hold, and the states still to tell the gateway.
    public var deliveryRulesDatabase: URL { url.appendingPathComponent("delivery-rules.sqlite") }

    /// The attachment data store: files moved out of apps' containers when a request is added.
    public var attachmentStore: URL { url.appendingPathComponent("attachments", isDirectory: true) }

    /// The gateway's database: provider keys, devices, tokens, stored notifications and the delivery log.
    public var gatewayDatabase: URL { url.appendingPathComponent("gateway.sqlite") }

    /// The console's database: operator tokens (their SHA-256) and what the console sent.
    public var consoleDatabase: URL { url.appendingPathComponent("console.sqlite") }

    /// The device daemon's app channel: the Unix socket app processes and the CLI reach it on.
    public var appChannelSocket: URL { url.appendingPathComponent("herald.sock") }

    /// The gateway's development CA and server certificate.
    public var tlsDirectory: URL { url.appendingPathComponent("tls", isDirectory: true) }

    /// Creates the directory (and parents) with owner-only permissions if it does not exist, and tightens an existing
    /// one that its group or others may read (``tightenPermissions()``).
    ///
    /// - Throws: The file system's error when the directory cannot be created.
    public func create() throws {
        try FileManager.default.createDirectory(
            at: url,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        try tightenPermissions()
    }

    /// Makes an existing directory owner-only (0700) when its group or others may enter or read it: it holds keys,
    /// tokens, subscriptions' private keys and payloads (issue 71), and files an older version wrote readable by all.
    ///
    /// - Returns: The mode it had, when it was tightened; `nil` when it was owner-only already or does not exist.
    /// - Throws: The file system's error when the mode cannot be changed.
    @discardableResult
    public func tightenPermissions() throws -> Int? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0
        else { return nil }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
        return mode
    }
}
