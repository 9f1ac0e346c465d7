import ArgumentParser
import Foundation
import UserNotifications

extension HeraldCommand {
    /// The device's location feed: location triggers fire when it enters or leaves their regions.
    struct Location: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the device's location; location-triggered notifications fire on entering or leaving regions.",
            usage: "herald location [--data-dir <data-dir>] <latitude> <longitude>",
            discussion:
                "A running `herald up` or `herald device` evaluates location triggers at once; an app running alone picks the location up within two seconds."
        )

        @OptionGroup var data: DataDirectoryOptions
        // Read as words, not as numbers: a negative latitude (`-33.8`) would otherwise be taken for an option.
        @Argument(
            parsing: .allUnrecognized,
            help: ArgumentHelp(
                "Latitude (−90…90), then longitude (−180…180), in degrees; negative south and west.",
                valueName: "latitude longitude"))
        var coordinates: [String] = []

        /// The values given (`--`, which ends the options, is not one).
        var given: [String] { coordinates.filter { $0 != "--" } }
        /// The latitude given.
        var latitude: Double { Double(given[0]) ?? .nan }
        /// The longitude given.
        var longitude: Double { Double(given[1]) ?? .nan }

        func validate() throws {
            guard given.count == 2 else {
                throw ValidationError(
                    "Give the latitude, then the longitude, in degrees: herald location -33.8688 151.2093 (got \(given.count) of them)."
                )
            }
            for (name, text) in zip(["latitude", "longitude"], given) where Double(text)?.isFinite != true {
                throw ValidationError("The \(name) must be a number of degrees, such as -33.8688; got \(text).")
            }
            guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                throw ValidationError("Latitude must be within −90…90 and longitude within −180…180.")
            }
        }

        func run() async throws {
            // The device's location belongs to no app: the change is sent as the device's, under an empty app name.
            try await NotificationChanges(data).apply(.updateLocation(latitude: latitude, longitude: longitude), for: "")
            print("Device location: \(latitude), \(longitude)")
        }
    }
}
