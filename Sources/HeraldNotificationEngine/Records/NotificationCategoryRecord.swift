/// The value behind a `UNNotificationCategory`.
package struct NotificationCategoryRecord: Sendable, Codable, Hashable {
    package var identifier: String
    package var actions: [NotificationActionRecord]
    package var intentIdentifiers: [String]
    package var hiddenPreviewsBodyPlaceholder: String?
    package var categorySummaryFormat: String?
    package var options: UInt
    /// The iOS 8 API's actions for the minimal context (banners), at most two; `nil` for UserNotifications
    /// categories, which show ``actions`` in every style.
    package var minimalActions: [NotificationActionRecord]?

    package init(
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

    package var categoryOptions: UNNotificationCategoryOptions { UNNotificationCategoryOptions(rawValue: options) }

    /// The actions shown with a notification in `style`: a banner shows the minimal context's actions when the
    /// category has them (the iOS 8 API), an alert — and every style of a UserNotifications category — ``actions``.
    package func displayedActions(in style: UNAlertStyle) -> [NotificationActionRecord] {
        if style != .alert, let minimalActions { return minimalActions }
        return actions
    }

    /// The action the person can pick with this identifier, in any context.
    package func action(withIdentifier identifier: String) -> NotificationActionRecord? {
        actions.first { $0.identifier == identifier } ?? minimalActions?.first { $0.identifier == identifier }
    }
}

/// The value behind a `UNNotificationAction` or `UNTextInputNotificationAction`.
package struct NotificationActionRecord: Sendable, Codable, Hashable {
    package struct TextInput: Sendable, Codable, Hashable {
        package var buttonTitle: String
        package var placeholder: String

        package init(buttonTitle: String, placeholder: String) {
            self.buttonTitle = buttonTitle
            self.placeholder = placeholder
        }
    }

    package struct Icon: Sendable, Codable, Hashable {
        package var systemImageName: String?
        package var templateImageName: String?

        package init(systemImageName: String?, templateImageName: String?) {
            self.systemImageName = systemImageName
            self.templateImageName = templateImageName
        }
    }

    package var identifier: String
    package var title: String
    package var options: UInt
    package var icon: Icon?
    package var textInput: TextInput?

    package init(identifier: String, title: String, options: UInt, icon: Icon?, textInput: TextInput?) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = icon
        self.textInput = textInput
    }
}
