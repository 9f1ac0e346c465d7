import Foundation

/// When an ended Live Activity leaves the screen.
public struct ActivityUIDismissalPolicy: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        case automatic
        case immediate
        case after(Date)
    }

    let kind: Kind

    /// The system's choice: up to four hours after it ended.
    public static let `default` = ActivityUIDismissalPolicy(kind: .automatic)
    /// At once.
    public static let immediate = ActivityUIDismissalPolicy(kind: .immediate)

    /// At `date`, within the four-hour window.
    public static func after(_ date: Date) -> ActivityUIDismissalPolicy {
        ActivityUIDismissalPolicy(kind: .after(date))
    }
}
