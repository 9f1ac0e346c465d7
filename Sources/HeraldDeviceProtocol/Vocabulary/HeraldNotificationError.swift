/// Herald's errors where Apple has none to give.
public enum HeraldNotificationError: Error, Hashable, CustomStringConvertible {
    /// A request's encoded size is over the limit the store accepts.
    case requestTooLarge(size: Int, limit: Int)
    /// The notification database could not be opened; nothing can be scheduled until it can.
    case storeUnavailable(path: String, reason: String)

    public var description: String {
        switch self {
        case .requestTooLarge(let size, let limit):
            "The notification request is \(size) bytes; Herald accepts up to \(limit) (content plus userInfo)"
        case .storeUnavailable(let path, let reason):
            "The notification database at \(path) cannot be opened: \(reason)"
        }
    }
}
