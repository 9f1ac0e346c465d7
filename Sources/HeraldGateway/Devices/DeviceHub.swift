import Synchronization

/// The devices connected right now: at most one session per device (a new connection replaces the old one).
final class DeviceHub: Sendable {
    private let sessions = Mutex<[String: DeviceSession]>([:])

    /// Makes `session` the device's session; returns the one it replaced.
    func attach(_ session: DeviceSession) -> DeviceSession? {
        sessions.withLock { $0.updateValue(session, forKey: session.deviceID) }
    }

    /// Forgets `session` if it is still the device's current one.
    func detach(_ session: DeviceSession) {
        sessions.withLock { sessions in
            if sessions[session.deviceID] === session { sessions[session.deviceID] = nil }
        }
    }

    /// The device's current session, if it is connected.
    func session(for deviceID: String) -> DeviceSession? {
        sessions.withLock { $0[deviceID] }
    }

    /// How many devices are connected.
    var count: Int { sessions.withLock { $0.count } }
}
