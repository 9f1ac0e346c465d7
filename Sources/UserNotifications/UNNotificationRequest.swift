import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationRequest`: an identifier, content, and the trigger that delivers it.
open class UNNotificationRequest: NSObject, NSCopying, NSSecureCoding {
    public let identifier: String
    let storedContent: UNNotificationContent
    let storedTrigger: UNNotificationTrigger?
    /// What the iOS 8 API set, for a request scheduled through it.
    let legacy: LegacyNotificationRecord?

    init(
        identifier: String, storedContent: UNNotificationContent, storedTrigger: UNNotificationTrigger?,
        legacy: LegacyNotificationRecord? = nil
    ) {
        self.identifier = identifier
        self.storedContent = storedContent
        self.storedTrigger = storedTrigger
        self.legacy = legacy
    }

    /// Creates a request. Content and trigger are copied (N-21): changing the mutable content afterwards does not
    /// change the request. A `nil` trigger delivers the notification right away (N-20).
    public convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.init(
            identifier: identifier,
            storedContent: content.copy() as! UNNotificationContent,
            storedTrigger: trigger?.copy() as? UNNotificationTrigger
        )
    }

    public var content: UNNotificationContent { storedContent }
    public var trigger: UNNotificationTrigger? { storedTrigger }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        guard let record = try? makeRecord() else { return }
        coder.encodeHeraldRecord(record)
    }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationRequestRecord.self) else { return nil }
        self.identifier = record.identifier
        self.storedContent = UNNotificationContent(record: record.content)
        self.storedTrigger = record.trigger.map { UNNotificationTrigger.make(record: $0, context: .standalone) }
        self.legacy = record.legacy
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationRequest else { return false }
        return identifier == other.identifier && storedContent.isEqual(other.storedContent)
            && storedTrigger?.record == other.storedTrigger?.record
    }

    open override var hash: Int { identifier.hashValue }

    open override var description: String {
        "<UNNotificationRequest: identifier: \(identifier), content: \(content), trigger: \(trigger.map { "\($0)" } ?? "(null)")>"
    }
}

extension UNNotificationRequest {
    /// The request's `Sendable` record.
    ///
    /// - Throws: `CocoaError(.propertyListWriteInvalid)` when the content's `userInfo` is not a property list.
    package func makeRecord() throws -> NotificationRequestRecord {
        NotificationRequestRecord(
            identifier: identifier, content: try storedContent.makeRecord(), trigger: storedTrigger?.record, legacy: legacy)
    }

    /// The request's record, with a `userInfo` that cannot be encoded left out (records made from the store always
    /// encode).
    package var record: NotificationRequestRecord {
        (try? makeRecord())
            ?? NotificationRequestRecord(
                identifier: identifier, content: (try? storedContent.makeRecord()) ?? NotificationContentRecord(),
                trigger: storedTrigger?.record, legacy: legacy)
    }

    /// A request object from a record, its trigger answering `nextTriggerDate()` in `context`.
    package convenience init(record: NotificationRequestRecord, context: TriggerContext) {
        self.init(
            identifier: record.identifier,
            storedContent: UNNotificationContent(record: record.content),
            storedTrigger: record.trigger.map { UNNotificationTrigger.make(record: $0, context: context) },
            legacy: record.legacy
        )
    }
}
