import HeraldDeviceProtocol

/// Turns a person's interaction with a delivered notification into the response its app gets (B-31).
///
/// Pure: the engine removes the notification from the delivered list and queues the response for the delegate.
enum ResponseRouter {
    /// What the app's delegate is told: the action's identifier and any typed text.
    struct Route: Sendable, Equatable {
        /// `UNNotificationDefaultActionIdentifier`, `UNNotificationDismissActionIdentifier` or the action's; `nil`
        /// when nothing is reported (a dismissal without `.customDismissAction`).
        var actionIdentifier: String?
        /// The text typed into a text-input action.
        var userText: String?

        init(actionIdentifier: String?, userText: String? = nil) {
            self.actionIdentifier = actionIdentifier
            self.userText = userText
        }
    }

    /// The response to `interaction` with a notification of the category `categoryIdentifier`.
    ///
    /// - Parameters:
    ///   - interaction: What the person did.
    ///   - category: The app's registered category of that identifier, if any.
    ///   - categoryIdentifier: The notification's category identifier.
    /// - Throws: ``NotificationInteractionError`` when the person could not have done it: an action the category
    ///   does not have (or no registered category, B-32), or text for an action without a text field (or none for
    ///   one with it).
    static func route(
        _ interaction: NotificationInteraction, category: NotificationCategoryRecord?, categoryIdentifier: String
    ) throws -> Route {
        switch interaction {
        case .open:
            return Route(actionIdentifier: UNNotificationDefaultActionIdentifier)
        case .dismiss:
            let reported = category?.categoryOptions.contains(.customDismissAction) == true
            return Route(actionIdentifier: reported ? UNNotificationDismissActionIdentifier : nil)
        case .action(let id):
            guard let action = category?.action(withIdentifier: id) else {
                throw NotificationInteractionError.unknownAction(identifier: id, category: categoryIdentifier)
            }
            guard action.textInput == nil else { throw NotificationInteractionError.notTextInput(identifier: id) }
            return Route(actionIdentifier: id)
        case .reply(let id, let text):
            guard let action = category?.action(withIdentifier: id) else {
                throw NotificationInteractionError.unknownAction(identifier: id, category: categoryIdentifier)
            }
            guard action.textInput != nil else { throw NotificationInteractionError.notTextInput(identifier: id) }
            return Route(actionIdentifier: id, userText: text)
        }
    }
}
