/// How urgent a push is (RFC 8030 §5.3 `Urgency`): a user agent may defer the lower ones to save power.
public enum WebPushUrgency: String, Sendable, CaseIterable, Comparable {
    case veryLow = "very-low"
    case low
    case normal
    case high

    private var rank: Int {
        switch self {
        case .veryLow: 0
        case .low: 1
        case .normal: 2
        case .high: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}
