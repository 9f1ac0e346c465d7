import Foundation
import Synchronization

/// What `CLLocationManager` asks of the device: the app's location authorization and the device's location.
///
/// UserNotifications provides it (the notification store keeps both, and location triggers need the authorization,
/// B-25): every notification center installs ``LocationServices/resolver``, which answers for the app of
/// `UNUserNotificationCenter.current()`.
package protocol LocationServiceProvider: Sendable {
    /// The app's authorization now.
    func authorizationStatus() -> CLAuthorizationStatus
    /// Asks the person (the first time) for `level` (`authorizedWhenInUse` or `authorizedAlways`); `completion` gets
    /// the status after the answer.
    func requestAuthorization(_ level: CLAuthorizationStatus, completion: @escaping @Sendable (CLAuthorizationStatus) -> Void)
    /// Where the device is (as `herald location` set it), if known.
    func deviceLocation() -> CLLocation?
}

/// Where `CLLocationManager` finds the device's location services.
package enum LocationServices {
    private static let installed = Mutex<(@Sendable () -> (any LocationServiceProvider)?)?>(nil)

    /// Answers with the provider for the running app (UserNotifications installs it when a center is made).
    package static var resolver: (@Sendable () -> (any LocationServiceProvider)?)? {
        get { installed.withLock { $0 } }
        set { installed.withLock { $0 = newValue } }
    }

    /// The running app's provider, if the app has a notification center.
    static var current: (any LocationServiceProvider)? { resolver?() }
}
