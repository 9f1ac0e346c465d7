import Foundation
import HeraldCore

/// What one event stream (`GET /api/v1/events`) saw of the device beside the console, to tell it what changed: each
/// delivered notification, Live Activity, widget and app push as the listings write it, by what identifies it.
///
/// Device events are changes of the device's state, read when one of its parts signals a change; they are not kept, so
/// a stream that resumes (`Last-Event-ID`) gets the ones after it opened again, not those it missed.
struct DeviceEventWatch {
    /// An event the stream sends: its kind (`event:`) and its JSON (`data:`).
    struct Event: Equatable {
        var kind: String
        var data: JSONValue
    }

    private let device: any TestBedDevice
    /// Only this app's events (the stream's `topic`); every app's when `nil`.
    private let bundleID: String?
    private var notifications: [String: JSONValue] = [:]
    private var activities: [String: JSONValue] = [:]
    private var widgets: [String: JSONValue] = [:]
    private var appPushes: [String: JSONValue] = [:]
    /// The device's signals and their generations when it was last read.
    private(set) var seen: [(signal: ChangeSignal, seen: UInt64)] = []

    /// A watch of `device`, for one app's events or every app's.
    ///
    /// - Parameters:
    ///   - device: The device beside the console.
    ///   - bundleID: The app whose events the stream wants; `nil` for every app's.
    init(device: any TestBedDevice, bundleID: String?) {
        self.device = device
        self.bundleID = bundleID
    }

    /// Whether one of the device's parts signalled a change since the last read.
    var hasChanged: Bool { seen.contains { $0.signal.generation != $0.seen } }

    /// Notes what the device has now, so that only what changes after it is sent.
    mutating func start() async throws {
        _ = try await changes()
    }

    /// Reads the device and returns what changed since the last read, in the order notifications, Live Activities,
    /// widgets, app pushes (each in its listing's order); nothing at the first read, which only notes what there is.
    mutating func changes() async throws -> [Event] {
        let first = seen.isEmpty
        // Noted before the read: a change while it reads is read again.
        seen = [device.changes, device.liveActivityChanges, device.widgetChanges, device.appPushChanges].map {
            ($0, $0.generation)
        }
        let apps = try await device.apps().filter { bundleID == nil || $0 == bundleID }
        var nowNotifications: [(key: String, json: JSONValue)] = []
        for app in apps {
            // Oldest first, as they came.
            for notification in try await device.notifications(of: app, in: .delivered).reversed() {
                nowNotifications.append((app + "\u{0}" + notification.identifier, notification.json))
            }
        }
        let nowActivities = try await device.liveActivities().filter { bundleID == nil || $0.bundleID == bundleID }
            .map { (key: $0.id, json: $0.json) }
        let nowWidgets = try await device.widgets().filter { bundleID == nil || $0.bundleID == bundleID }
            .map { (key: $0.bundleID + "\u{0}" + $0.kind, json: $0.json) }
        let nowPushes = try await device.appPushes().filter { bundleID == nil || $0.bundleID == bundleID }
            .map { push in
                // A background push `herald simulate` made has no uniqueID: its app and when it came name it.
                let name = push.uniqueID ?? "\(push.bundleID)@\(push.receivedAt.timeIntervalSince1970)"
                return (key: push.kind.rawValue + "\u{0}" + name, json: push.json)
            }
        var events: [Event] = []
        events += Self.diff(&notifications, nowNotifications, kind: "notification", removed: "notificationRemoved")
        events += Self.diff(&activities, nowActivities, kind: "activity", removed: nil)
        events += Self.diff(&widgets, nowWidgets, kind: "widget", removed: nil)
        events += Self.diff(&appPushes, nowPushes, kind: "appPush", removed: nil)
        return first ? [] : events
    }

    /// Replaces `known` with `now` and returns an event for each entry that is new or changed, and one for each that
    /// went (when `removed` names the event).
    private static func diff(
        _ known: inout [String: JSONValue], _ now: [(key: String, json: JSONValue)], kind: String, removed: String?
    ) -> [Event] {
        var events: [Event] = []
        var next: [String: JSONValue] = [:]
        for (key, json) in now {
            next[key] = json
            if known[key] != json { events.append(Event(kind: kind, data: json)) }
        }
        if let removed {
            for (key, json) in known.sorted(by: { $0.key < $1.key }) where next[key] == nil {
                events.append(
                    Event(
                        kind: removed,
                        data: .members([
                            "bundleID": json["bundleID"], "identifier": json["identifier"], "uniqueID": json["uniqueID"],
                        ])))
            }
        }
        known = next
        return events
    }
}
