import Foundation
import HeraldCore

extension NotificationRequestRecord {
    /// The request a push becomes (T-2): its identifier is the `apns-collapse-id` when there is one (so a later push
    /// with the same one replaces it in the delivered list), else the `apns-id`; the trigger is the push trigger.
    ///
    /// - Parameters:
    ///   - content: The payload, mapped (`RemoteNotificationContent`).
    ///   - apnsID: The push's `apns-id`.
    ///   - collapseID: The push's `apns-collapse-id`, if any.
    public init(remote content: RemoteNotificationContent, apnsID: String, collapseID: String?) {
        self.init(
            identifier: collapseID.flatMap { $0.isEmpty ? nil : $0 } ?? apnsID,
            content: NotificationContentRecord(remote: content), trigger: .push)
    }
}

extension NotificationContentRecord {
    /// The content a push shows, with the whole payload as `userInfo` (N-7).
    public init(remote: RemoteNotificationContent) {
        self.init()
        title = remote.title
        subtitle = remote.subtitle
        body = remote.body
        launchImageName = remote.launchImageName
        badge = remote.badge
        switch remote.sound {
        case nil: sound = nil
        case .default?: sound = NotificationSoundRecord(kind: .default)
        case .named(let name)?: sound = NotificationSoundRecord(kind: .named, name: name)
        case .critical(nil, let volume)?: sound = NotificationSoundRecord(kind: .defaultCritical, volume: Float(volume))
        case .critical(let name?, let volume)?:
            sound = NotificationSoundRecord(kind: .critical, name: name, volume: Float(volume))
        }
        categoryIdentifier = remote.categoryIdentifier
        threadIdentifier = remote.threadIdentifier
        targetContentIdentifier = remote.targetContentIdentifier
        interruptionLevel =
            switch remote.interruptionLevel {
            case "passive": .passive
            case "time-sensitive": .timeSensitive
            case "critical": .critical
            default: .active
            }
        relevanceScore = remote.relevanceScore
        filterCriteria = remote.filterCriteria
        userInfo = UserInfoArchive.data(forPayload: remote.userInfo)
    }
}
