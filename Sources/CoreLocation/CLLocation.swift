import Foundation

/// A reported location, as in Apple's CoreLocation (the coordinate and time only).
open class CLLocation: NSObject, @unchecked Sendable {
    /// Where the device is.
    public let coordinate: CLLocationCoordinate2D

    /// When the location was determined.
    public let timestamp: Date

    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.coordinate = CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
        self.timestamp = Date()
    }

    public init(coordinate: CLLocationCoordinate2D, timestamp: Date) {
        self.coordinate = coordinate
        self.timestamp = timestamp
    }

    /// The great-circle distance in meters to another location.
    open func distance(from location: CLLocation) -> CLLocationDistance {
        CLLocation.distance(from: coordinate, to: location.coordinate)
    }

    /// Haversine distance in meters on a sphere of Earth's mean radius.
    static func distance(from a: CLLocationCoordinate2D, to b: CLLocationCoordinate2D) -> CLLocationDistance {
        let earthRadius = 6_371_008.8
        let lat1 = a.latitude * .pi / 180
        let lat2 = b.latitude * .pi / 180
        let dLat = lat2 - lat1
        let dLon = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }
}
