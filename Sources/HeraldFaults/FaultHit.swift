import Foundation

/// A fault rule hitting one request: which rule, and what it does to it now.
public struct FaultHit: Sendable, Equatable {
    /// The rule's ID.
    public var ruleID: String
    /// What happens to the request.
    public var action: Action

    /// What happens to a request a rule hit, its values drawn.
    public enum Action: Sendable, Equatable {
        /// Refused with this answer (its 410 `timestamp` set).
        case answer(FaultAnswer)
        /// Handled as usual, answered this many seconds late.
        case delay(seconds: Double)
    }

    /// A hit of rule `ruleID`.
    public init(ruleID: String, action: Action) {
        self.ruleID = ruleID
        self.action = action
    }

    /// The hit in the delivery log's words: what it did and which rule did it — for a refusal, the push's last state
    /// (`Discarded - Fault: answered 429 TooManyRequests by fault rule fault-1`).
    public var description: String {
        switch action {
        case .answer(let answer):
            var text = "Discarded - Fault: answered \(answer.status) \(answer.reason)"
            if let retryAfter = answer.retryAfter { text += " with Retry-After \(retryAfter)" }
            return text + " by fault rule \(ruleID)"
        case .delay(let seconds):
            return "Answered late by fault rule \(ruleID): \(String(format: "%.3f", seconds)) s"
        }
    }
}
