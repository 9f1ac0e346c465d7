import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNMutableNotificationContent`: content an app builds for a request.
open class UNMutableNotificationContent: UNNotificationContent {
    public init() {
        super.init(storage: NotificationContentRecord(), userInfo: [:], attachments: [])
    }

    override init(storage: NotificationContentRecord, userInfo: [AnyHashable: Any], attachments: [UNNotificationAttachment]) {
        super.init(storage: storage, userInfo: userInfo, attachments: attachments)
    }

    public required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    public override var title: String {
        get { storage.title }
        set { storage.title = newValue }
    }
    public override var subtitle: String {
        get { storage.subtitle }
        set { storage.subtitle = newValue }
    }
    public override var body: String {
        get { storage.body }
        set { storage.body = newValue }
    }
    public override var badge: NSNumber? {
        get { storage.badge.map { NSNumber(value: $0) } }
        set { storage.badge = newValue?.intValue }
    }
    public override var sound: UNNotificationSound? {
        get { storage.sound.map(UNNotificationSound.init(record:)) }
        set { storage.sound = newValue?.record }
    }
    public override var launchImageName: String {
        get { storage.launchImageName }
        set { storage.launchImageName = newValue }
    }
    public override var userInfo: [AnyHashable: Any] {
        get { storedUserInfo }
        set { storedUserInfo = newValue }
    }
    public override var attachments: [UNNotificationAttachment] {
        get { storedAttachments }
        set { storedAttachments = newValue }
    }
    public override var categoryIdentifier: String {
        get { storage.categoryIdentifier }
        set { storage.categoryIdentifier = newValue }
    }
    public override var threadIdentifier: String {
        get { storage.threadIdentifier }
        set { storage.threadIdentifier = newValue }
    }
    public override var targetContentIdentifier: String? {
        get { storage.targetContentIdentifier }
        set { storage.targetContentIdentifier = newValue }
    }
    @available(*, deprecated, message: "summaryArgument is ignored")
    public override var summaryArgument: String {
        get { storage.summaryArgument }
        set { storage.summaryArgument = newValue }
    }
    /// Apple: "Default is 1 and cannot be 0"; a 0 is stored as 1.
    @available(*, deprecated, message: "summaryArgumentCount is ignored")
    public override var summaryArgumentCount: Int {
        get { storage.summaryArgumentCount }
        set { storage.summaryArgumentCount = max(1, newValue) }
    }
    public override var interruptionLevel: UNNotificationInterruptionLevel {
        get { storage.interruptionLevel }
        set { storage.interruptionLevel = newValue }
    }
    public override var relevanceScore: Double {
        get { storage.relevanceScore }
        set { storage.relevanceScore = newValue }
    }
    public override var filterCriteria: String? {
        get { storage.filterCriteria }
        set { storage.filterCriteria = newValue }
    }

    open override func copy(with zone: NSZone? = nil) -> Any {
        UNNotificationContent(storage: storage, userInfo: storedUserInfo, attachments: storedAttachments)
    }
}
