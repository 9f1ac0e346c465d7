import Foundation

/// The value behind a `UNNotificationTrigger`.
package enum NotificationTriggerRecord: Sendable, Codable, Hashable {
    case push
    case timeInterval(TimeInterval, repeats: Bool)
    case calendar(DateComponents, repeats: Bool)
    case location(NotificationRegionRecord, repeats: Bool)

    package var repeats: Bool {
        switch self {
        case .push: false
        case .timeInterval(_, let repeats), .calendar(_, let repeats), .location(_, let repeats): repeats
        }
    }
}

/// The value behind a `CLCircularRegion` in a location trigger.
package struct NotificationRegionRecord: Sendable, Codable, Hashable {
    package var identifier: String
    package var latitude: Double
    package var longitude: Double
    package var radius: Double
    package var notifyOnEntry: Bool
    package var notifyOnExit: Bool

    package init(
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
