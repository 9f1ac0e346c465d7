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
        /// The stream reset with this HTTP/2 error code.
        case resetStream(code: String)
        /// A GOAWAY with this reason, the request refused.
        case goAway(reason: String)
        /// The connection closed, the request unanswered.
        case close
        /// A new connection closed before SETTINGS.
        case closeBeforeSettings

        /// Whether the request is refused — not processed, neither kept nor delivered — rather than handled as usual.
        public var refuses: Bool {
            switch self {
            case .answer, .goAway: true
            case .resetStream(let code): code == "REFUSED_STREAM"
            case .delay, .close, .closeBeforeSettings: false
            }
        }
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
        case .goAway(let reason):
            return "Discarded - Fault: GOAWAY \(reason) before its stream by fault rule \(ruleID)"
        case .resetStream(let code) where action.refuses:
            return "Discarded - Fault: RST_STREAM \(code) by fault rule \(ruleID)"
        case .resetStream(let code):
            return "Answer lost by fault rule \(ruleID): RST_STREAM \(code) after it was handled"
        case .close:
            return "Answer lost by fault rule \(ruleID): the connection closed after it was handled"
        case .closeBeforeSettings:
            return "A connection closed before SETTINGS by fault rule \(ruleID)"
        }
    }
}
