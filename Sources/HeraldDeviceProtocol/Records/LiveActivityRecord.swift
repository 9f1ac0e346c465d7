import Foundation

/// One Live Activity as the device daemon keeps it and as it crosses the app channel: ActivityKit's `Activity` in an
/// app process is a view of it.
///
/// The attributes and the content state are JSON text, written and read with Foundation's default JSON coders, as
/// Apple decodes a push's `content-state` ("default JSON decoding", A13).
public struct LiveActivityRecord: Sendable, Hashable, Codable {
    /// What an activity's state is: ActivityKit's `ActivityState` by its name.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        case active, ended, dismissed, stale
        /// Scheduled to start at ``LiveActivityRecord/scheduledStart`` (iOS 26), not started yet.
        case pending
    }

    /// How the activity receives updates by push.
    public enum PushType: Sendable, Hashable, Codable {
        /// By its own push token (a `liveactivity` push to that token).
        case token
        /// By broadcasts on a channel (B-14).
        case channel(String)
    }

    /// The activity's ID (a UUID string, as ActivityKit's).
    public var id: String
    /// The app.
    public var bundleIdentifier: String
    /// The attributes type's name, as a push-to-start payload's `attributes-type` names it.
    public var attributesType: String
    /// The attributes, JSON.
    public var attributes: String
    /// What is shown.
    public var content: LiveActivityContentRecord
    public var state: State
    public var pushType: PushType?
    /// The activity's push token (hex) once the gateway issued it.
    public var pushToken: String?
    /// The `timestamp` of the newest push applied (seconds since 1970); older ones are ignored.
    public var pushTimestamp: Double?
    /// When an ended activity leaves the screen (Apple: up to 4 hours after it ended).
    public var dismissalDate: Date?
    /// The alert of the latest update that had one.
    public var alert: LiveActivityAlertRecord?
    /// When it started.
    public var startedAt: Date
    /// Whether a push started it (push-to-start), rather than the app.
    public var startedByPush: Bool
    /// When a scheduled activity starts (`request(…start:)`, iOS 26); `nil` for one that started when requested.
    public var scheduledStart: Date?

    public init(
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
    public var channelID: String? {
        if case .channel(let id)? = pushType { id } else { nil }
    }

    /// Whether it still takes updates (active or stale).
    public var isRunning: Bool { state == .active || state == .stale }
}

/// What a Live Activity shows: ActivityKit's `ActivityContent`, its state as JSON.
public struct LiveActivityContentRecord: Sendable, Hashable, Codable {
    /// The `ContentState`, JSON.
    public var state: String
    /// When the content is out of date (the activity turns `stale`).
    public var staleDate: Date?
    /// Which of the app's activities the system shows first (higher first).
    public var relevanceScore: Double

    public init(state: String, staleDate: Date?, relevanceScore: Double) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

/// The alert an update carries (ActivityKit's `AlertConfiguration`, or a push's `alert`).
public struct LiveActivityAlertRecord: Sendable, Hashable, Codable {
    public var title: String
    public var body: String
    /// The sound's name, `default` for the default one; `nil` for none.
    public var sound: String?

    public init(title: String, body: String, sound: String?) {
        self.title = title
        self.body = body
        self.sound = sound
    }
}

/// How an ending activity leaves the screen: ActivityKit's `ActivityUIDismissalPolicy`.
public enum LiveActivityDismissal: Sendable, Hashable, Codable {
    /// Up to 4 hours after it ended (Apple's default).
    case automatic
    /// At once.
    case immediate
    /// At this date (within the 4-hour window).
    case after(Date)
}
