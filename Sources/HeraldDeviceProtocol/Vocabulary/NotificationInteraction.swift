/// What a person does with a delivered notification.
public enum NotificationInteraction: Sendable, Hashable, Codable {
    /// Taps the notification: opens the app (`UNNotificationDefaultActionIdentifier`).
    case open
    /// Picks one of the category's actions.
    case action(String)
    /// Types `text` into a text-input action and sends it.
    case reply(action: String, text: String)
    /// Dismisses it; reported to the app only for categories with `.customDismissAction`.
    case dismiss
}
