import Foundation

/// The value behind a `UNNotificationTrigger`.
public enum NotificationTriggerRecord: Sendable, Codable, Hashable {
    case push
    case timeInterval(TimeInterval, repeats: Bool)
    case calendar(DateComponents, repeats: Bool)
    case location(NotificationRegionRecord, repeats: Bool)

    public var repeats: Bool {
        switch self {
        case .push: false
        case .timeInterval(_, let repeats), .calendar(_, let repeats), .location(_, let repeats): repeats
        }
    }
}

/// The value behind a `CLCircularRegion` in a location trigger.
public struct NotificationRegionRecord: Sendable, Codable, Hashable {
    public var identifier: String
    public var latitude: Double
    public var longitude: Double
    public var radius: Double
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool

    public init(
        identifier: String, latitude: Double, longitude: Double, radius: Double,
        notifyOnEntry: Bool, notifyOnExit: Bool
    ) {
        self.identifier = identifier
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }
}
