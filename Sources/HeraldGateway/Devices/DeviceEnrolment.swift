import HeraldCore
import NIOCore

/// Who may enrol a new device — a device ID the gateway has not seen with a secret: one on this machine (loopback),
/// and one off it only with the gateway's enrolment credential, sent as the `Herald-Enrolment` header of its
/// WebSocket upgrade. A gateway without a credential enrols devices from this machine only. A device already
/// enrolled connects with its own secret, credential or not.
///
/// The credential is a shared secret the operator hands to the devices' owners (`herald gateway --enrolment-secret-file`,
/// `herald device --enrolment-secret-file`): a header any WebSocket client can send, checked in constant time, and only
/// on a device's first connection, so rotating it strands no enrolled device.
public struct DeviceEnrolment: Sendable, Equatable {
    /// The credential a device off this machine presents to enrol; `nil`: such devices cannot enrol.
    public var secret: String?
    /// Whether a device on this machine enrols without the credential (`herald up`'s sandbox, a node's own devices).
    public var trustsLoopback: Bool

    /// The header a device's WebSocket upgrade carries the credential in.
    public static let header = "herald-enrolment"

    /// Creates the rule.
    ///
    /// - Parameters:
    ///   - secret: The credential a device off this machine presents to enrol; `nil`: such devices cannot enrol.
    ///   - trustsLoopback: Whether a device on this machine enrols without it.
    public init(secret: String? = nil, trustsLoopback: Bool = true) {
        self.secret = secret
        self.trustsLoopback = trustsLoopback
    }

    /// Whether a new device connecting from `address` with `presented` (its upgrade's header) may enrol.
    ///
    /// - Parameters:
    ///   - address: The connection's remote address.
    ///   - presented: The credential the device presented, if any.
    func admits(from address: SocketAddress?, presenting presented: String?) -> Bool {
        if trustsLoopback, DeviceHTTPHandler.isLoopback(address) { return true }
        guard let secret, let presented else { return false }
        return presented.isSameSecret(as: secret)
    }

    /// Why a device was not enrolled, as it is told.
    var refusal: String {
        secret == nil
            ? "This gateway enrols new devices from its own machine only; ask its operator to start it with --enrolment-secret-file."
            : "Enrolling a new device on this gateway takes its enrolment credential (herald device --enrolment-secret-file)."
    }
}
