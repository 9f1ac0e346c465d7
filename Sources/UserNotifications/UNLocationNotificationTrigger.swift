import CoreLocation
import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNLocationNotificationTrigger`: fires when the device enters or leaves a region.
///
/// Herald has no GPS: the location comes from a feed (the testing kit's simulated user, or `herald location`).
/// Only `CLCircularRegion` regions can be crossed; other `CLRegion`s are kept but never fire.
open class UNLocationNotificationTrigger: UNNotificationTrigger {
    /// Creates the trigger; the region's `notifyOnEntry` / `notifyOnExit` choose which crossings fire it (B-25).
    public convenience init(region: CLRegion, repeats: Bool) {
        let circle = region as? CLCircularRegion
        let record = NotificationRegionRecord(
            identifier: region.identifier,
            latitude: circle?.center.latitude ?? .nan,
            longitude: circle?.center.longitude ?? .nan,
            radius: circle?.radius ?? -1,
            notifyOnEntry: region.notifyOnEntry,
            notifyOnExit: region.notifyOnExit
        )
        self.init(record: .location(record, repeats: repeats), context: .standalone)
    }

    /// The region, as a `CLCircularRegion`.
    public var region: CLRegion {
        guard case .location(let record, _) = record else { return CLCircularRegion(center: .init(), radius: 0, identifier: "") }
        let region = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: record.latitude, longitude: record.longitude),
            radius: record.radius, identifier: record.identifier
        )
        region.notifyOnEntry = record.notifyOnEntry
        region.notifyOnExit = record.notifyOnExit
        return region
    }

    open override var description: String {
        "<UNLocationNotificationTrigger: repeats: \(repeats), region: \(region.identifier)>"
    }
}
