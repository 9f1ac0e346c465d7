import Foundation

/// The `Sendable` value behind a `UNNotificationContent`: what the engine schedules, stores and delivers.
public struct NotificationContentRecord: Sendable, Codable, Hashable {
    public var title = ""
    public var subtitle = ""
    public var body = ""
    public var badge: Int?
    public var sound: NotificationSoundRecord?
    public var launchImageName = ""
    /// `userInfo` as `UserInfoArchive` keeps it (JSON text, or a binary property list); `nil` when it is empty.
    public var userInfo: Data?
    public var attachments: [NotificationAttachmentRecord] = []
    public var categoryIdentifier = ""
    public var threadIdentifier = ""
    public var targetContentIdentifier: String?
    public var summaryArgument = ""
    public var summaryArgumentCount = 1
    public var interruptionLevel: UNNotificationInterruptionLevel = .active
    public var relevanceScore: Double = 0
    public var filterCriteria: String?

    public init() {}

    /// Whether anything would be shown, heard or counted: the rule behind `notificationInvalidNoContent`.
    public var hasUserVisibleContent: Bool {
        !title.isEmpty || !subtitle.isEmpty || !body.isEmpty || badge != nil || sound != nil || !attachments.isEmpty
    }
}

/// The value behind a `UNNotificationSound`.
public struct NotificationSoundRecord: Sendable, Codable, Hashable {
    public enum Kind: String, Sendable, Codable {
        case `default`, named, defaultCritical, critical, defaultRingtone, ringtone
    }

    public var kind: Kind
    public var name: String?
    public var volume: Float?

    public init(kind: Kind, name: String? = nil, volume: Float? = nil) {
        self.kind = kind
        self.name = name
        self.volume = volume
    }
}

/// The value behind a `UNNotificationAttachment`.
public struct NotificationAttachmentRecord: Sendable, Codable, Hashable {
    public var identifier: String
    /// The file's path: in the app's container before `add`, in the attachment data store after.
    public var path: String
    /// The uniform type identifier, e.g. `public.jpeg`.
    public var type: String
    public var thumbnailHidden = false
    public var thumbnailClippingRect: [String: Double]?
    public var thumbnailTime: Double?

    public init(identifier: String, path: String, type: String) {
        self.identifier = identifier
        self.path = path
        self.type = type
    }
}
