/// Where a Live Activity is in its life.
public enum ActivityState: Equatable, Hashable, Sendable {
    /// Shown, and takes updates.
    case active
    /// Ended, still shown until it is dismissed (up to four hours later).
    case ended
    /// Gone from the screen.
    case dismissed
    /// Its content passed its stale date; an update makes it active again.
    case stale
    /// Scheduled to start at a date (`request(attributes:content:pushType:style:alertConfiguration:start:)`, iOS 26)
    /// and not started yet.
    case pending
}
