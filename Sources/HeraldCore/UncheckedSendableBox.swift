/// Carries a value that is not `Sendable` across a concurrency boundary whose safety is argued at the use site.
///
/// Used where Apple's API shape forces it: completion handlers and `NSObject` model classes are not `Sendable`
/// but are, by Apple's contract, handed to "a background thread".
public struct UncheckedSendableBox<Value>: @unchecked Sendable {
    /// The carried value.
    public let value: Value

    /// Wraps `value`.
    ///
    /// - Parameter value: The value to carry.
    public init(_ value: Value) {
        self.value = value
    }
}
