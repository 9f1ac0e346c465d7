import CoreLocation
import Foundation
import Testing

/// The part of Apple's CoreLocation that location triggers need: coordinates, circular regions, distances, the
/// authorization status's raw values (B-25).
@Suite struct CoreLocationShapesTests {
    @Test("CLAuthorizationStatus has Apple's raw values; `authorized` is the iOS 7 name of always")
    func authorizationStatusRawValues() {
        #expect(CLAuthorizationStatus.notDetermined.rawValue == 0)
        #expect(CLAuthorizationStatus.restricted.rawValue == 1)
        #expect(CLAuthorizationStatus.denied.rawValue == 2)
        #expect(CLAuthorizationStatus.authorizedAlways.rawValue == 3)
        #expect(CLAuthorizationStatus.authorizedWhenInUse.rawValue == 4)
    }

    @Test("CLLocationCoordinate2DIsValid: latitude −90…90, longitude −180…180, finite")
    func coordinateValidity() {
        #expect(CLLocationCoordinate2DIsValid(CLLocationCoordinate2D(latitude: 90, longitude: -180)))
        #expect(!CLLocationCoordinate2DIsValid(CLLocationCoordinate2D(latitude: 90.0001, longitude: 0)))
        #expect(!CLLocationCoordinate2DIsValid(CLLocationCoordinate2D(latitude: 0, longitude: 180.5)))
        #expect(!CLLocationCoordinate2DIsValid(CLLocationCoordinate2D(latitude: .nan, longitude: 0)))
    }

    @Test("Great-circle distance: a degree of latitude is about 111.2 km, Shanghai to Beijing about 1,068 km, symmetric")
    func distances() {
        let origin = CLLocation(latitude: 0, longitude: 0)
        let north = CLLocation(latitude: 1, longitude: 0)
        #expect(abs(origin.distance(from: north) - 111_195) < 10)
        let shanghai = CLLocation(latitude: 31.2304, longitude: 121.4737)
        let beijing = CLLocation(latitude: 39.9042, longitude: 116.4074)
        #expect(abs(shanghai.distance(from: beijing) - 1_067_000) < 3_000)
        #expect(shanghai.distance(from: beijing) == beijing.distance(from: shanghai))
        #expect(shanghai.distance(from: shanghai) == 0)
    }

    @Test("A circular region contains what lies within its radius, its border included; a copy is equal and keeps its flags")
    func circularRegion() throws {
        let office = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: 0, longitude: 0), radius: 1_000, identifier: "office")
        office.notifyOnExit = false
        #expect(office.contains(CLLocationCoordinate2D(latitude: 0.008, longitude: 0)))  // about 890 m
        #expect(!office.contains(CLLocationCoordinate2D(latitude: 0.0091, longitude: 0)))  // about 1,012 m
        let copy = try #require(office.copy() as? CLCircularRegion)
        #expect(copy == office)
        #expect(copy !== office)
        #expect(copy.notifyOnEntry && !copy.notifyOnExit)
        let other = CLCircularRegion(center: office.center, radius: 999, identifier: "office")
        #expect(other != office)
    }
}
