import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationCategory`: a type of notification the app declares, with its actions.
open class UNNotificationCategory: NSObject, NSCopying, NSSecureCoding {
    let record: NotificationCategoryRecord

    package init(record: NotificationCategoryRecord) {
        self.record = record
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            record: NotificationCategoryRecord(
                identifier: identifier, actions: actions.map(\.record), intentIdentifiers: intentIdentifiers,
                hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil, options: options.rawValue
            ))
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            record: NotificationCategoryRecord(
                identifier: identifier, actions: actions.map(\.record), intentIdentifiers: intentIdentifiers,
                hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder, categorySummaryFormat: nil,
                options: options.rawValue
            ))
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?,
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            record: NotificationCategoryRecord(
                identifier: identifier, actions: actions.map(\.record), intentIdentifiers: intentIdentifiers,
                hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder, categorySummaryFormat: categorySummaryFormat,
                options: options.rawValue
            ))
    }

    public var identifier: String { record.identifier }
    /// In display order.
    public var actions: [UNNotificationAction] { record.actions.map(UNNotificationAction.make(record:)) }
    public var intentIdentifiers: [String] { record.intentIdentifiers }
    public var options: UNNotificationCategoryOptions { record.categoryOptions }
    public var hiddenPreviewsBodyPlaceholder: String { record.hiddenPreviewsBodyPlaceholder ?? "" }
    public var categorySummaryFormat: String { record.categorySummaryFormat ?? "" }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationCategoryRecord.self) else { return nil }
        self.record = record
    }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationCategory)?.record == record
    }

    open override var hash: Int { record.hashValue }

    open override var description: String {
        "<UNNotificationCategory: identifier: \(identifier), actions: \(record.actions.map(\.identifier)), options: \(options.rawValue)>"
    }
}
