import ArgumentParser
import Foundation
import UserNotifications

extension HeraldCommand {
    /// The device's location feed: location triggers fire when it enters or leaves their regions.
    struct Location: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the device's location; location-triggered notifications fire on entering or leaving regions.",
            discussion:
                "A running `herald up` or `herald device` evaluates location triggers at once; an app running alone picks the location up within two seconds."
        )

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "Latitude in degrees (−90…90).") var latitude: Double
        @Argument(help: "Longitude in degrees (−180…180).") var longitude: Double

        func validate() throws {
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
