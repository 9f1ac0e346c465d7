import Foundation
import HeraldDeviceProtocol
import UserNotifications

/// Apple's `UIUserNotificationCategory` (iOS 8): a group of actions for notifications of one kind, per context.
/// Make one with ``UIMutableUserNotificationCategory``.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIUserNotificationCategory: NSObject, NSCopying, NSMutableCopying, NSSecureCoding {
    /// What a notification's `category` names.
    open internal(set) var identifier: String?
    var actionsByContext: [UIUserNotificationActionContext: [UIUserNotificationAction]] = [:]

    public required override init() {
        super.init()
    }

    public static var supportsSecureCoding: Bool { true }

    /// Archives the category (its identifier and the actions of both contexts) as Herald archives its model classes.
    open func encode(with coder: NSCoder) {
        coder.encodeHeraldRecord(record)
    }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationCategoryRecord.self) else { return nil }
        super.init()
        apply(record)
    }

    /// The actions shown in `context`, in order; `nil` when none were set for it.
    open func actions(for context: UIUserNotificationActionContext) -> [UIUserNotificationAction]? {
        actionsByContext[context]
    }

    fileprivate func copy<T: UIUserNotificationCategory>(as type: T.Type) -> T {
        let copy = T()
        copy.identifier = identifier
        copy.actionsByContext = actionsByContext.mapValues { $0.map { $0.copy() as! UIUserNotificationAction } }
        return copy
    }

    open func copy(with zone: NSZone? = nil) -> Any { copy(as: UIUserNotificationCategory.self) }

    open func mutableCopy(with zone: NSZone? = nil) -> Any { copy(as: UIMutableUserNotificationCategory.self) }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UIUserNotificationCategory else { return false }
        return identifier == other.identifier && actionsByContext == other.actionsByContext
    }

    open override var hash: Int { identifier?.hashValue ?? 0 }

    /// The category as UserNotifications keeps it: the default context's actions (at most four) as its actions, the
    /// minimal context's (at most two; when none were set, the first two of the default context's, as iOS shows in
    /// a banner) as its minimal actions. Actions over the limits are left out, as iOS leaves them out.
    var record: NotificationCategoryRecord {
        let full = (actionsByContext[.default] ?? []).prefix(4).map(\.record)
        let minimal = actionsByContext[.minimal].map { $0.prefix(2).map(\.record) } ?? Array(full.prefix(2))
        var record = NotificationCategoryRecord(
            identifier: identifier ?? "", actions: Array(full), intentIdentifiers: [], hiddenPreviewsBodyPlaceholder: nil,
            categorySummaryFormat: nil, options: 0)
        record.minimalActions = minimal
        return record
    }

    /// The iOS 8 view of a category UserNotifications keeps.
    convenience init(record: NotificationCategoryRecord) {
        self.init()
        apply(record)
    }

    private func apply(_ record: NotificationCategoryRecord) {
        identifier = record.identifier
        actionsByContext[.default] = record.actions.map(UIUserNotificationAction.init(record:))
        actionsByContext[.minimal] = record.displayedActions(in: .banner).prefix(2).map(UIUserNotificationAction.init(record:))
    }
}

/// Apple's `UIMutableUserNotificationCategory` (iOS 8): a category whose identifier and actions can be set.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIMutableUserNotificationCategory: UIUserNotificationCategory {
    open override var identifier: String? {
        get { super.identifier }
        set { super.identifier = newValue }
    }

    /// Sets the actions shown in `context` (the default context shows up to four, the minimal up to two). The actions
    /// are copied.
    open func setActions(_ actions: [UIUserNotificationAction]?, for context: UIUserNotificationActionContext) {
        actionsByContext[context] = actions?.map { $0.copy() as! UIUserNotificationAction }
    }
}
