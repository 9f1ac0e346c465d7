import Foundation

/// When WidgetKit asks for the next timeline: Apple's `TimelineReloadPolicy`.
public struct TimelineReloadPolicy: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        case atEnd, never
        case after(Date)
    }

    let kind: Kind

    /// After the last entry's date.
    public static let atEnd = TimelineReloadPolicy(kind: .atEnd)
    /// Only when the app asks (`WidgetCenter.reloadTimelines(ofKind:)`) or a `widgets` push comes.
    public static let never = TimelineReloadPolicy(kind: .never)

    /// After `date`.
    public static func after(_ date: Date) -> TimelineReloadPolicy {
        TimelineReloadPolicy(kind: .after(date))
    }

    /// The form the device keeps: `atEnd`, `never` or `after:<seconds since 1970>`.
    var recorded: String {
        switch kind {
        case .atEnd: "atEnd"
        case .never: "never"
        case .after(let date): "after:\(date.timeIntervalSince1970)"
        }
    }
}
