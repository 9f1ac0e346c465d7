import Foundation

/// The person's device-wide Focus and summary settings (`herald focus …`), as the engine keeps them.
public struct FocusSettings: Sendable, Hashable, Codable {
    /// A time of day, `HH:MM` on the 24-hour clock.
    public struct TimeOfDay: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
        public var hour: Int
        public var minute: Int

        public init?(hour: Int, minute: Int) {
            guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
            self.hour = hour
            self.minute = minute
        }

        /// Reads `HH:MM` (or `H:MM`); `nil` for anything else.
        public init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
                parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
                let hour = Int(parts[0]), let minute = Int(parts[1])
            else { return nil }
            self.init(hour: hour, minute: minute)
        }

        public var description: String {
            (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        }

        public static func < (left: Self, right: Self) -> Bool {
            (left.hour, left.minute) < (right.hour, right.minute)
        }
    }

    /// Whether a Focus is on.
    public var isOn = false
    /// The apps the Focus allows (their notifications break through at every level).
    public var allowedApps: [String] = []
    /// The scheduled summary's times (iOS offers 08:00 and 18:00 first).
    public var summaryTimes: [TimeOfDay] = [.init(hour: 8, minute: 0)!, .init(hour: 18, minute: 0)!]

    public init(isOn: Bool = false, allowedApps: [String] = [], summaryTimes: [TimeOfDay]? = nil) {
        self.isOn = isOn
        self.allowedApps = allowedApps
        if let summaryTimes { self.summaryTimes = summaryTimes }
    }
}
