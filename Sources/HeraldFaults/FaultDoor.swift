/// Which of the gateway's front doors a fault rule applies to.
public enum FaultDoor: String, Sendable, CaseIterable {
    /// Apple's provider API (`POST /3/device/<token>`).
    case apns
    /// Firebase Cloud Messaging's HTTP v1 API.
    case fcm
    /// Web Push (RFC 8030 `POST /push/…`).
    case webpush
}
