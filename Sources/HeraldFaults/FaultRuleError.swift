/// Why a fault rule was refused: the field at fault (`effect.status`, `probability`, …) and what is wrong with it.
public struct FaultRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field at fault, as the API names it (dotted for a nested one).
    public var field: String
    /// What is wrong, in one line.
    public var message: String

    /// An error about `field`.
    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    /// The error in one line: `field: message`, or the message alone when no field is at fault.
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}
