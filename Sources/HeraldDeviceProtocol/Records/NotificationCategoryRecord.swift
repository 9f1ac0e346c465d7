/// The value behind a `UNNotificationCategory`.
public struct NotificationCategoryRecord: Sendable, Codable, Hashable {
    public var identifier: String
    public var actions: [NotificationActionRecord]
    public var intentIdentifiers: [String]
    public var hiddenPreviewsBodyPlaceholder: String?
    public var categorySummaryFormat: String?
    public var options: UInt
    /// The iOS 8 API's actions for the minimal context (banners), at most two; `nil` for UserNotifications
    /// categories, which show ``actions`` in every style.
    public var minimalActions: [NotificationActionRecord]?

    public init(
        identifier: String, actions: [NotificationActionRecord], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?, options: UInt
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder
        self.categorySummaryFormat = categorySummaryFormat
        self.options = options
    }

    public var categoryOptions: UNNotificationCategoryOptions { UNNotificationCategoryOptions(rawValue: options) }

    /// The actions shown with a notification in `style`: a banner shows the minimal context's actions when the
    /// category has them (the iOS 8 API), an alert — and every style of a UserNotifications category — ``actions``.
    public func displayedActions(in style: UNAlertStyle) -> [NotificationActionRecord] {
        if style != .alert, let minimalActions { return minimalActions }
        return actions
    }

    /// The action the person can pick with this identifier, in any context.
    public func action(withIdentifier identifier: String) -> NotificationActionRecord? {
        actions.first { $0.identifier == identifier } ?? minimalActions?.first { $0.identifier == identifier }
    }
}

/// The value behind a `UNNotificationAction` or `UNTextInputNotificationAction`.
public struct NotificationActionRecord: Sendable, Codable, Hashable {
    public struct TextInput: Sendable, Codable, Hashable {
        public var buttonTitle: String
        public var placeholder: String

        public init(buttonTitle: String, placeholder: String) {
            self.buttonTitle = buttonTitle
            self.placeholder = placeholder
        }
    }

    public struct Icon: Sendable, Codable, Hashable {
        public var systemImageName: String?
        public var templateImageName: String?

        public init(systemImageName: String?, templateImageName: String?) {
            self.systemImageName = systemImageName
            self.templateImageName = templateImageName
        }
    }

    public var identifier: String
    public var title: String
    public var options: UInt
    public var icon: Icon?
    public var textInput: TextInput?

    public init(identifier: String, title: String, options: UInt, icon: Icon?, textInput: TextInput?) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = icon
        self.textInput = textInput
    }
}
