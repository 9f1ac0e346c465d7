import Foundation

/// Why a Live Activity could not be requested.
public enum ActivityAuthorizationError: Error, Equatable, Sendable, LocalizedError {
    /// The attributes and content state together are over 4 KB (Apple's limit for an activity's data).
    case attributesTooLarge
    /// The person turned Live Activities off.
    case denied
    case globalMaximumExceeded
    case malformedActivityIdentifier
    case missingProcessIdentifier
    /// The activity could not be encoded or kept.
    case persistenceFailure
    case reconnectNotPermitted
    case targetMaximumExceeded
    case unentitled
    case unsupported
    case unsupportedTarget
    case visibility

    public var errorDescription: String? {
        switch self {
        case .attributesTooLarge: "The Live Activity's attributes and content state are larger than 4 KB."
        case .denied: "Live Activities are turned off."
        case .persistenceFailure: "The Live Activity could not be encoded or kept."
        default: "The Live Activity could not be started (\(self))."
        }
    }
}
