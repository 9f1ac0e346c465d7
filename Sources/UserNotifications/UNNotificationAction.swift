import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationAction`: a button shown with notifications of a category.
open class UNNotificationAction: NSObject, NSCopying, NSSecureCoding {
    package let record: NotificationActionRecord

    package init(record: NotificationActionRecord) {
        self.record = record
    }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.init(
            record: NotificationActionRecord(
                identifier: identifier, title: title, options: options.rawValue, icon: nil, textInput: nil
            ))
    }

    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?
    ) {
        self.init(
            record: NotificationActionRecord(
                identifier: identifier, title: title, options: options.rawValue, icon: icon?.record, textInput: nil
            ))
    }

    public var identifier: String { record.identifier }
    public var title: String { record.title }
    public var options: UNNotificationActionOptions { UNNotificationActionOptions(rawValue: record.options) }
    public var icon: UNNotificationActionIcon? { record.icon.map(UNNotificationActionIcon.init(record:)) }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationActionRecord.self) else { return nil }
        self.record = record
    }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationAction)?.record == record
    }

    open override var hash: Int { record.hashValue }

    open override var description: String {
        "<\(type(of: self)): identifier: \(identifier), title: \(title), options: \(options.rawValue)>"
    }

    /// The action object of the right class for a record.
    package static func make(record: NotificationActionRecord) -> UNNotificationAction {
        record.textInput == nil ? UNNotificationAction(record: record) : UNTextInputNotificationAction(record: record)
    }
}

/// Apple's `UNTextInputNotificationAction`: an action that asks the person to type a reply.
open class UNTextInputNotificationAction: UNNotificationAction {
    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [],
        textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        self.init(
            record: NotificationActionRecord(
                identifier: identifier, title: title, options: options.rawValue, icon: nil,
                textInput: .init(buttonTitle: textInputButtonTitle, placeholder: textInputPlaceholder)
            ))
    }

    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [],
        icon: UNNotificationActionIcon?, textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        self.init(
            record: NotificationActionRecord(
                identifier: identifier, title: title, options: options.rawValue, icon: icon?.record,
                textInput: .init(buttonTitle: textInputButtonTitle, placeholder: textInputPlaceholder)
            ))
    }

    public var textInputButtonTitle: String { record.textInput?.buttonTitle ?? "" }
    public var textInputPlaceholder: String { record.textInput?.placeholder ?? "" }
}

/// Apple's `UNNotificationActionIcon` (iOS 15): a system or template image for an action. No public getters.
open class UNNotificationActionIcon: NSObject, NSCopying, NSSecureCoding {
    let record: NotificationActionRecord.Icon

    init(record: NotificationActionRecord.Icon) {
        self.record = record
    }

    public convenience init(systemImageName: String) {
        self.init(record: .init(systemImageName: systemImageName, templateImageName: nil))
    }

    public convenience init(templateImageName: String) {
        self.init(record: .init(systemImageName: nil, templateImageName: templateImageName))
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationActionRecord.Icon.self) else { return nil }
        self.record = record
    }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationActionIcon)?.record == record
    }

    open override var hash: Int { record.hashValue }
}
