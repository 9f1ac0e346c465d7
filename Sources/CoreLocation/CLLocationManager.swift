import Foundation
import HeraldCore
import Logging

/// Apple's `CLLocationManagerDelegate`, the authorization part. Both methods are optional.
public protocol CLLocationManagerDelegate: NSObjectProtocol {
    /// The app's authorization changed — and once when the manager is made (iOS 14 and later).
    func locationManagerDidChangeAuthorization(_ manager: CLLocationManager)

    /// The app's authorization changed — and once when the manager is made (before iOS 14).
    @available(iOS, introduced: 4.2, deprecated: 14.0)
    func locationManager(_ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus)
}

extension CLLocationManagerDelegate {
    public func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {}
    public func locationManager(_ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus) {}
}

/// Apple's `CLLocationManager`, as far as location-triggered notifications need it (B-25): the app's location
/// authorization and the device's location.
///
/// The device's location is what `herald location` set. The person's answer to the authorization prompt is the same
/// as to the notification prompt (`HERALD_AUTHORIZATION_ANSWER`, the testing kit's `SimulatedUser`); `herald settings
/// APP --location` changes it afterwards. Delegate calls come on the main queue, like the notification center's.
/// The app's notification center must exist first (`UNUserNotificationCenter.current()`, which UIKit's `@main` makes
/// at launch): it keeps the authorization.
open class CLLocationManager: NSObject {
    /// Gets the authorization changes.
    open weak var delegate: (any CLLocationManagerDelegate)? {
        didSet { if delegate != nil { reportAuthorization() } }
    }

    /// The device's location services for this app: found when the manager is made (or, if the app had no center
    /// yet then, at first use).
    private var boundServices: (any LocationServiceProvider)?
    private var services: (any LocationServiceProvider)? {
        if boundServices == nil { boundServices = LocationServices.current }
        return boundServices
    }

    public override init() {
        super.init()
        boundServices = LocationServices.current
    }

    /// Location services are on (the device has a location whenever `herald location` set one).
    open class func locationServicesEnabled() -> Bool { true }

    /// The app's authorization.
    open var authorizationStatus: CLAuthorizationStatus {
        services?.authorizationStatus() ?? .notDetermined
    }

    /// The app's authorization.
    @available(iOS, introduced: 4.2, deprecated: 14.0)
    open class func authorizationStatus() -> CLAuthorizationStatus {
        LocationServices.current?.authorizationStatus() ?? .notDetermined
    }

    /// Asks the person to allow location while the app is in use; the delegate hears the answer.
    open func requestWhenInUseAuthorization() {
        request(.authorizedWhenInUse)
    }

    /// Asks the person to allow location at any time; the delegate hears the answer.
    open func requestAlwaysAuthorization() {
        request(.authorizedAlways)
    }

    /// The device's last known location, when the app is allowed to know it.
    open var location: CLLocation? {
        guard let services else { return nil }
        switch services.authorizationStatus() {
        case .authorizedAlways, .authorizedWhenInUse: return services.deviceLocation()
        case .notDetermined, .restricted, .denied: return nil
        }
    }

    private func request(_ level: CLAuthorizationStatus) {
        guard let services else {
            Logger(label: "herald.corelocation").warning(
                "No notification center yet, so no location authorization to ask for: call UNUserNotificationCenter.current() first"
            )
            return
        }
        let before = services.authorizationStatus()
        let manager = UncheckedSendableBox(self)
        services.requestAuthorization(level) { after in
            if after != before { manager.value.reportAuthorization() }
        }
    }

    /// Tells the delegate the authorization, on the main queue.
    private func reportAuthorization() {
        let manager = UncheckedSendableBox(self)
        DelegateQueue.run {
            let manager = manager.value
            guard let delegate = manager.delegate else { return }
            delegate.locationManagerDidChangeAuthorization(manager)
            delegate.locationManager(manager, didChangeAuthorization: manager.authorizationStatus)
        }
    }
}
