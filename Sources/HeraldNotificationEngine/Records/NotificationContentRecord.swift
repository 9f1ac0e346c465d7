import Foundation

/// The `Sendable` value behind a `UNNotificationContent`: what the engine schedules, stores and delivers.
package struct NotificationContentRecord: Sendable, Codable, Hashable {
    package var title = ""
    package var subtitle = ""
    package var body = ""
    package var badge: Int?
    package var sound: NotificationSoundRecord?
    package var launchImageName = ""
    /// `userInfo` as ``UserInfoArchive`` keeps it (JSON text, or a binary property list); `nil` when it is empty.
    package var userInfo: Data?
    package var attachments: [NotificationAttachmentRecord] = []
    package var categoryIdentifier = ""
    package var threadIdentifier = ""
    package var targetContentIdentifier: String?
    package var summaryArgument = ""
    package var summaryArgumentCount = 1
    package var interruptionLevel: UNNotificationInterruptionLevel = .active
    package var relevanceScore: Double = 0
    package var filterCriteria: String?

    package init() {}

    /// Whether anything would be shown, heard or counted: the rule behind `notificationInvalidNoContent`.
    var hasUserVisibleContent: Bool {
        !title.isEmpty || !subtitle.isEmpty || !body.isEmpty || badge != nil || sound != nil || !attachments.isEmpty
    }
}

/// The value behind a `UNNotificationSound`.
package struct NotificationSoundRecord: Sendable, Codable, Hashable {
    package enum Kind: String, Sendable, Codable {
        case `default`, named, defaultCritical, critical, defaultRingtone, ringtone
    }

    package var kind: Kind
    package var name: String?
    package var volume: Float?

    package init(kind: Kind, name: String? = nil, volume: Float? = nil) {
        self.kind = kind
        self.name = name
        self.volume = volume
    }
}

/// The value behind a `UNNotificationAttachment`.
package struct NotificationAttachmentRecord: Sendable, Codable, Hashable {
    package var identifier: String
    /// The file's path: in the app's container before `add`, in the attachment data store after.
    package var path: String
    /// The uniform type identifier, e.g. `public.jpeg`.
    package var type: String
    package var thumbnailHidden = false
    package var thumbnailClippingRect: [String: Double]?
    package var thumbnailTime: Double?

    package init(identifier: String, path: String, type: String) {
        self.identifier = identifier
        self.path = path
        self.type = type
    }
}
