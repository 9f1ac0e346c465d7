/// Why a simulated interaction could not happen: the person could not have done it on a real device.
public enum NotificationInteractionError: Error, Hashable, CustomStringConvertible {
    /// No delivered notification has this identifier.
    case notDelivered(identifier: String)
    /// The notification's category has no action with this identifier (or the category is not registered, B-32).
    case unknownAction(identifier: String, category: String)
    /// The action is not a text-input action, so there is nothing to type into (or it is, and needs text).
    case notTextInput(identifier: String)

    public var description: String {
        switch self {
        case .notDelivered(let identifier): "No delivered notification has the identifier \"\(identifier)\""
        case .unknownAction(let identifier, let category):
            "Category \"\(category)\" is not registered or has no action \"\(identifier)\""
        case .notTextInput(let identifier): "Action \"\(identifier)\" is not a text-input action"
        }
    }
}
