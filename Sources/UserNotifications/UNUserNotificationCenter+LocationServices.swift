import CoreLocation
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

extension UNUserNotificationCenter {
    /// Makes `CLLocationManager` answer for the app of `UNUserNotificationCenter.current()` (called when a center is
    /// made: Core Location cannot depend on UserNotifications, so this module installs itself there).
    static func installLocationServices() {
        guard LocationServices.resolver == nil else { return }
        LocationServices.resolver = {
            guard let center = NotificationRuntime.existingCenter else { return nil }
            return CenterLocationServices(center: center)
        }
    }
}

/// The app's location authorization and the device's location, kept by the notification store.
private struct CenterLocationServices: LocationServiceProvider {
    let center: UncheckedSendableBox<UNUserNotificationCenter>

    init(center: UNUserNotificationCenter) {
        self.center = UncheckedSendableBox(center)
    }

    func authorizationStatus() -> CLAuthorizationStatus {
        center.value.appStateNow()?.locationAuthorizationStatus ?? .notDetermined
    }

    func requestAuthorization(_ level: CLAuthorizationStatus, completion: @escaping @Sendable (CLAuthorizationStatus) -> Void) {
        let center = self.center.value
        let bundleIdentifier = center.bundleIdentifier
        center.submit(.requestLocationAuthorization(level: level.rawValue)) { result in
            switch result {
            case .success(.locationStatus(let status)): completion(CLAuthorizationStatus(rawValue: status) ?? .notDetermined)
            case .success: completion(.notDetermined)
            case .failure(let error):
                Logger(label: "herald.usernotifications").warning(
                    "Could not ask for location authorization",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                    ])
                completion(.notDetermined)
            }
        }
    }

    func deviceLocation() -> CLLocation? {
        guard let location = center.value.snapshotNow()?.deviceLocation else { return nil }
        return CLLocation(latitude: location.latitude, longitude: location.longitude)
    }
}
