import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's abstract `UNNotificationTrigger`: what makes a request fire.
open class UNNotificationTrigger: NSObject, NSCopying, NSSecureCoding {
    let record: NotificationTriggerRecord
    var context: TriggerContext

    package init(record: NotificationTriggerRecord, context: TriggerContext) {
        self.record = record
        self.context = context
    }

    /// Whether the trigger fires again after it fires (repeating requests stay pending until removed, B-12).
    public var repeats: Bool { record.repeats }

    open func copy(with zone: NSZone? = nil) -> Any {
        UNNotificationTrigger.make(record: record, context: context)
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationTriggerRecord.self) else { return nil }
        self.record = record
        self.context = .standalone
    }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationTrigger)?.record == record
    }

    open override var hash: Int { record.hashValue }

    /// Builds the trigger object of the right class for a record.
    package static func make(record: NotificationTriggerRecord, context: TriggerContext) -> UNNotificationTrigger {
        switch record {
        case .push: UNPushNotificationTrigger(record: record, context: context)
        case .timeInterval: UNTimeIntervalNotificationTrigger(record: record, context: context)
        case .calendar: UNCalendarNotificationTrigger(record: record, context: context)
        case .location: UNLocationNotificationTrigger(record: record, context: context)
        }
    }
}

/// Apple's `UNPushNotificationTrigger`: the trigger of a notification that came from a push.
open class UNPushNotificationTrigger: UNNotificationTrigger {}
