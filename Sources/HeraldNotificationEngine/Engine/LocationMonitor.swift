import CoreLocation
import Foundation
import HeraldDeviceProtocol

/// Knows whether the device is inside each location trigger's region, and tells which regions a new location
/// enters or leaves (B-25).
///
/// The first location a request sees only establishes inside or outside: a trigger fires on a later crossing, in
/// the direction it asks for (`notifyOnEntry`, `notifyOnExit`).
struct LocationMonitor: Sendable {
    /// Inside or outside, per app and pending sequence.
    private var inside: [String: Bool] = [:]

    init() {}

    /// The requests among `pending` whose region the device entered or left at this location, as they ask.
    ///
    /// - Parameters:
    ///   - latitude: The device's new latitude.
    ///   - longitude: The device's new longitude.
    ///   - pending: The pending requests with location triggers, per app (others are passed over).
    mutating func crossings(
        latitude: Double, longitude: Double, among pending: [(bundleIdentifier: String, pending: PendingNotification)]
    ) -> [(bundleIdentifier: String, pending: PendingNotification)] {
        let here = CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
        var crossings: [(bundleIdentifier: String, pending: PendingNotification)] = []
        for (bundleIdentifier, item) in pending {
            guard case .location(let region, _) = item.request.trigger else { continue }
            let circle = CLCircularRegion(
                center: CLLocationCoordinate2D(latitude: region.latitude, longitude: region.longitude),
                radius: region.radius, identifier: region.identifier
            )
            let isInside = circle.contains(here)
            let key = "\(bundleIdentifier)\u{0}\(item.sequence)"
            let previous = inside[key]
            inside[key] = isInside
            guard let previous, previous != isInside else { continue }
            if (isInside && region.notifyOnEntry) || (!isInside && region.notifyOnExit) {
                crossings.append((bundleIdentifier, item))
            }
        }
        return crossings
    }
}
