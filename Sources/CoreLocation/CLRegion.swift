import Foundation

/// Degrees of latitude or longitude, as in Apple's CoreLocation.
public typealias CLLocationDegrees = Double

/// A distance in meters, as in Apple's CoreLocation.
public typealias CLLocationDistance = Double

/// A latitude/longitude pair, as in Apple's CoreLocation.
public struct CLLocationCoordinate2D: Sendable, Hashable, Codable {
    public var latitude: CLLocationDegrees
    public var longitude: CLLocationDegrees

    public init() {
        self.latitude = 0
        self.longitude = 0
    }

    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Whether a coordinate lies on Earth (latitude −90…90, longitude −180…180), as Apple's function of this name.
public func CLLocationCoordinate2DIsValid(_ coordinate: CLLocationCoordinate2D) -> Bool {
    coordinate.latitude.isFinite && coordinate.longitude.isFinite
        && (-90...90).contains(coordinate.latitude) && (-180...180).contains(coordinate.longitude)
}

/// The abstract region class of Apple's CoreLocation: an identifier and which crossings to report.
///
/// Herald ships the shape location triggers need (`UNLocationNotificationTrigger(region:repeats:)`), not a
/// location service.
open class CLRegion: NSObject, NSCopying, @unchecked Sendable {
    /// The region's identifier; Apple requires it to be unique among an app's monitored regions.
    public let identifier: String

    /// Whether entering the region is reported. Default `true`.
    open var notifyOnEntry: Bool = true

    /// Whether leaving the region is reported. Default `true`.
    open var notifyOnExit: Bool = true

    init(identifier: String) {
        self.identifier = identifier
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let region = CLRegion(identifier: identifier)
        region.notifyOnEntry = notifyOnEntry
        region.notifyOnExit = notifyOnExit
        return region
    }
}

/// A circular geographic region: a center and a radius in meters, as in Apple's CoreLocation.
open class CLCircularRegion: CLRegion, @unchecked Sendable {
    /// The region's center.
    public let center: CLLocationCoordinate2D

    /// The region's radius in meters.
    public let radius: CLLocationDistance

    public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) {
        self.center = center
        self.radius = radius
        super.init(identifier: identifier)
    }

    /// Whether `coordinate` lies inside the region (great-circle distance ≤ radius).
    open func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
        CLLocation.distance(from: center, to: coordinate) <= radius
    }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let region = CLCircularRegion(center: center, radius: radius, identifier: identifier)
        region.notifyOnEntry = notifyOnEntry
        region.notifyOnExit = notifyOnExit
        return region
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CLCircularRegion else { return false }
        return identifier == other.identifier && center == other.center && radius == other.radius
            && notifyOnEntry == other.notifyOnEntry && notifyOnExit == other.notifyOnExit
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(identifier)
        hasher.combine(center)
        hasher.combine(radius)
        return hasher.finalize()
    }
}
