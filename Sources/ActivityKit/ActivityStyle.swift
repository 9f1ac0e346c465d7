/// How a Live Activity appears (iOS 18): shown until it ends, or only briefly.
public enum ActivityStyle: Equatable, Hashable, Sendable {
    /// Shown on the Lock Screen and in the Dynamic Island until it ends (the default).
    case standard
    /// Shown briefly, then only in the Dynamic Island (Herald's device shows both alike).
    case transient
}
