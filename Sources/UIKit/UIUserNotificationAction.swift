import Foundation
import HeraldDeviceProtocol
import UserNotifications

/// Apple's `UIUserNotificationActivationMode` (iOS 8): whether picking an action brings the app to the front.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationActionOptions")
public enum UIUserNotificationActivationMode: UInt, Sendable {
    /// The app comes to the front (`applicationState` is `.inactive` while the handler runs).
    case foreground = 0
    /// The handler runs without bringing the app to the front (`applicationState` is `.background` meanwhile).
    case background = 1
}

/// Apple's `UIUserNotificationActionContext` (iOS 8): how much room the notification has for actions.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationCategory")
public enum UIUserNotificationActionContext: UInt, Sendable {
    /// An alert: up to four actions.
    case `default` = 0
    /// A banner: up to two actions.
    case minimal = 1
}

/// Apple's `UIUserNotificationActionBehavior` (iOS 9): a button, or a button with a text field.
@available(iOS, introduced: 9.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNTextInputNotificationAction")
public enum UIUserNotificationActionBehavior: UInt, Sendable {
    case `default` = 0
    /// The action asks for text, reported under ``UIUserNotificationActionResponseTypedTextKey``.
    case textInput = 1
}

/// The key of the typed text in `handleActionWithIdentifier`'s `responseInfo`.
public let UIUserNotificationActionResponseTypedTextKey = "UIUserNotificationActionResponseTypedTextKey"
/// The key of a text-input action's send-button title in its `parameters`.
public let UIUserNotificationTextInputActionButtonTitleKey = "UIUserNotificationTextInputActionButtonTitleKey"

/// Apple's `UIUserNotificationAction` (iOS 8): a button shown with a notification. Make one with
/// ``UIMutableUserNotificationAction``.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationAction")
open class UIUserNotificationAction: NSObject, NSCopying, NSMutableCopying, NSSecureCoding {
    /// What `handleActionWithIdentifier` reports.
    open internal(set) var identifier: String?
    /// The button's title.
    open internal(set) var title: String?
    /// A button, or a button with a text field.
    open internal(set) var behavior: UIUserNotificationActionBehavior = .default
    /// The behavior's parameters (``UIUserNotificationTextInputActionButtonTitleKey``).
    open internal(set) var parameters: [AnyHashable: Any] = [:]
    /// Whether the app comes to the front.
    open internal(set) var activationMode: UIUserNotificationActivationMode = .foreground
    /// Whether the device must be unlocked first (always true for foreground actions).
    open internal(set) var isAuthenticationRequired = false
    /// Whether the button is shown as destructive.
    open internal(set) var isDestructive = false

    public required override init() {
        super.init()
    }

    public static var supportsSecureCoding: Bool { true }

    /// Archives the action as Herald archives its model classes (one key holding its record): the identifier, title,
    /// activation mode, flags, behavior and text-input button title round-trip; other `parameters` are left out.
    open func encode(with coder: NSCoder) {
        coder.encodeHeraldRecord(record)
    }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationActionRecord.self) else { return nil }
        super.init()
        apply(record)
    }

    /// A copy with the same properties, of `type`.
    fileprivate func copy<T: UIUserNotificationAction>(as type: T.Type) -> T {
        let copy = T()
        copy.identifier = identifier
        copy.title = title
        copy.behavior = behavior
        copy.parameters = parameters
        copy.activationMode = activationMode
        copy.isAuthenticationRequired = isAuthenticationRequired
        copy.isDestructive = isDestructive
        return copy
    }

    open func copy(with zone: NSZone? = nil) -> Any { copy(as: UIUserNotificationAction.self) }

    open func mutableCopy(with zone: NSZone? = nil) -> Any { copy(as: UIMutableUserNotificationAction.self) }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UIUserNotificationAction else { return false }
        return identifier == other.identifier && title == other.title && behavior == other.behavior
            && activationMode == other.activationMode && isAuthenticationRequired == other.isAuthenticationRequired
            && isDestructive == other.isDestructive
            && propertyListsEqual(parameters, other.parameters)
    }

    open override var hash: Int { identifier?.hashValue ?? 0 }

    /// The action as UserNotifications keeps it: `.foreground` for foreground activation, `.destructive`,
    /// `.authenticationRequired`; a text-input action gets a text field.
    var record: NotificationActionRecord {
        var options: UNNotificationActionOptions = []
        if activationMode == .foreground { options.insert(.foreground) }
        if isDestructive { options.insert(.destructive) }
        if isAuthenticationRequired { options.insert(.authenticationRequired) }
        let textInput =
            behavior == .textInput
            ? NotificationActionRecord.TextInput(
                buttonTitle: parameters[UIUserNotificationTextInputActionButtonTitleKey] as? String ?? "Send", placeholder: "")
            : nil
        return NotificationActionRecord(
            identifier: identifier ?? "", title: title ?? "", options: options.rawValue, icon: nil, textInput: textInput)
    }

    /// The iOS 8 view of an action UserNotifications keeps.
    convenience init(record: NotificationActionRecord) {
        self.init()
        apply(record)
    }

    private func apply(_ record: NotificationActionRecord) {
        let options = UNNotificationActionOptions(rawValue: record.options)
        identifier = record.identifier
        title = record.title
        activationMode = options.contains(.foreground) ? .foreground : .background
        isDestructive = options.contains(.destructive)
        isAuthenticationRequired = options.contains(.authenticationRequired)
        if let textInput = record.textInput {
            behavior = .textInput
            parameters = [UIUserNotificationTextInputActionButtonTitleKey: textInput.buttonTitle]
        }
    }
}

/// Apple's `UIMutableUserNotificationAction` (iOS 8): an action whose properties can be set.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationAction")
open class UIMutableUserNotificationAction: UIUserNotificationAction {
    open override var identifier: String? {
        get { super.identifier }
        set { super.identifier = newValue }
    }

    open override var title: String? {
        get { super.title }
        set { super.title = newValue }
    }

    open override var behavior: UIUserNotificationActionBehavior {
        get { super.behavior }
        set { super.behavior = newValue }
    }

    open override var parameters: [AnyHashable: Any] {
        get { super.parameters }
        set { super.parameters = newValue }
    }

    open override var activationMode: UIUserNotificationActivationMode {
        get { super.activationMode }
        set { super.activationMode = newValue }
    }

    open override var isAuthenticationRequired: Bool {
        get { super.isAuthenticationRequired }
        set { super.isAuthenticationRequired = newValue }
    }

    open override var isDestructive: Bool {
        get { super.isDestructive }
        set { super.isDestructive = newValue }
    }
}
