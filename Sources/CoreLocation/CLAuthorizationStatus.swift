/// Apple's `CLAuthorizationStatus`: what the person allowed the app to do with the device's location.
public enum CLAuthorizationStatus: Int32, Sendable {
    /// The app has not asked yet.
    case notDetermined = 0
    /// Not allowed, and the person cannot change it.
    case restricted = 1
    /// The person said no.
    case denied = 2
    /// Allowed at any time.
    case authorizedAlways = 3
    /// Allowed while the app is in use — enough for location-triggered notifications (B-25).
    case authorizedWhenInUse = 4

    /// The iOS 7 name of ``authorizedAlways``.
    @available(iOS, introduced: 2.0, deprecated: 8.0, message: "Use kCLAuthorizationStatusAuthorizedAlways")
    public static var authorized: CLAuthorizationStatus { .authorizedAlways }
}
