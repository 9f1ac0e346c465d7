import Foundation

/// One Live Activity as the device daemon keeps it and as it crosses the app channel: ActivityKit's `Activity` in an
/// app process is a view of it.
///
/// The attributes and the content state are JSON text, written and read with Foundation's default JSON coders, as
/// Apple decodes a push's `content-state` ("default JSON decoding", A13).
package struct LiveActivityRecord: Sendable, Hashable, Codable {
    /// What an activity's state is: ActivityKit's `ActivityState` by its name.
    package enum State: String, Sendable, Hashable, Codable, CaseIterable {
        case active, ended, dismissed, stale
        /// Scheduled to start at ``LiveActivityRecord/scheduledStart`` (iOS 26), not started yet.
        case pending
    }

    /// How the activity receives updates by push.
    package enum PushType: Sendable, Hashable, Codable {
        /// By its own push token (a `liveactivity` push to that token).
        case token
        /// By broadcasts on a channel (B-14).
        case channel(String)
    }

    /// The activity's ID (a UUID string, as ActivityKit's).
    package var id: String
    /// The app.
    package var bundleIdentifier: String
    /// The attributes type's name, as a push-to-start payload's `attributes-type` names it.
    package var attributesType: String
    /// The attributes, JSON.
    package var attributes: String
    /// What is shown.
    package var content: LiveActivityContentRecord
    package var state: State
    package var pushType: PushType?
    /// The activity's push token (hex) once the gateway issued it.
    package var pushToken: String?
    /// The `timestamp` of the newest push applied (seconds since 1970); older ones are ignored.
    package var pushTimestamp: Double?
    /// When an ended activity leaves the screen (Apple: up to 4 hours after it ended).
    package var dismissalDate: Date?
    /// The alert of the latest update that had one.
    package var alert: LiveActivityAlertRecord?
    /// When it started.
    package var startedAt: Date
    /// Whether a push started it (push-to-start), rather than the app.
    package var startedByPush: Bool
    /// When a scheduled activity starts (`request(…start:)`, iOS 26); `nil` for one that started when requested.
    package var scheduledStart: Date?

    package init(
        id: String, bundleIdentifier: String, attributesType: String, attributes: String,
        content: LiveActivityContentRecord, state: State = .active, pushType: PushType?, pushToken: String? = nil,
        pushTimestamp: Double? = nil, dismissalDate: Date? = nil, alert: LiveActivityAlertRecord? = nil,
        startedAt: Date, startedByPush: Bool = false, scheduledStart: Date? = nil
    ) {
        self.id = id
        self.bundleIdentifier = bundleIdentifier
        self.attributesType = attributesType
        self.attributes = attributes
        self.content = content
        self.state = state
        self.pushType = pushType
        self.pushToken = pushToken
        self.pushTimestamp = pushTimestamp
        self.dismissalDate = dismissalDate
        self.alert = alert
        self.startedAt = startedAt
        self.startedByPush = startedByPush
        self.scheduledStart = scheduledStart
    }

    /// The channel it listens on, if it is a channel's.
    package var channelID: String? {
        if case .channel(let id)? = pushType { id } else { nil }
    }

    /// Whether it still takes updates (active or stale).
    package var isRunning: Bool { state == .active || state == .stale }
}

/// What a Live Activity shows: ActivityKit's `ActivityContent`, its state as JSON.
package struct LiveActivityContentRecord: Sendable, Hashable, Codable {
    /// The `ContentState`, JSON.
    package var state: String
    /// When the content is out of date (the activity turns `stale`).
    package var staleDate: Date?
    /// Which of the app's activities the system shows first (higher first).
    package var relevanceScore: Double

    package init(state: String, staleDate: Date?, relevanceScore: Double) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

/// The alert an update carries (ActivityKit's `AlertConfiguration`, or a push's `alert`).
package struct LiveActivityAlertRecord: Sendable, Hashable, Codable {
    package var title: String
    package var body: String
    /// The sound's name, `default` for the default one; `nil` for none.
    package var sound: String?

    package init(title: String, body: String, sound: String?) {
        self.title = title
        self.body = body
        self.sound = sound
    }
}

/// How an ending activity leaves the screen: ActivityKit's `ActivityUIDismissalPolicy`.
package enum LiveActivityDismissal: Sendable, Hashable, Codable {
    /// Up to 4 hours after it ended (Apple's default).
    case automatic
    /// At once.
    case immediate
    /// At this date (within the 4-hour window).
    case after(Date)
}
