import Foundation
import Synchronization

/// The devices connected right now: at most one session per device (a new connection replaces the old one).
///
/// Pushes flow one way through it: the dispatcher hands a push to the device's session, or stores it and tells the
/// hub, whose forwarder sends stored pushes to the session for as long as it lasts.
final class DeviceHub: Sendable {
    private let sessions = Mutex<[String: DeviceSession]>([:])
    private let forwarder: StoredPushForwarder

    /// Creates a hub whose sessions get their stored pushes from `forwarder`.
    init(forwarder: StoredPushForwarder) {
        self.forwarder = forwarder
    }

    /// Makes `session` the device's session while `body` runs (closing the one it replaces), and forwards the
    /// device's stored pushes meanwhile; then closes it and forgets it.
    func connect(_ session: DeviceSession, during body: () async -> Void) async {
        sessions.withLock { $0.updateValue(session, forKey: session.deviceID) }?.close()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.forwarder.forward(to: session) }
            await body()
            session.close()
        }
        sessions.withLock { sessions in
            if sessions[session.deviceID] === session { sessions[session.deviceID] = nil }
        }
    }

    /// A push was stored for `deviceID`: if it is connected, its session's forwarder looks again.
    func storedPushArrived(for deviceID: String) {
        session(for: deviceID)?.storedPushesArrived()
    }

    /// The device connected to another node at `date`: its session here, if it began before, is an older one.
    func deviceConnectedElsewhere(_ deviceID: String, at date: Date) {
        let replaced = sessions.withLock { sessions -> DeviceSession? in
            guard let session = sessions[deviceID], session.connectedAt < date else { return nil }
            sessions[deviceID] = nil
            return session
        }
        replaced?.close()
    }

    /// Announcements may have been lost: every connected device's forwarder looks again.
    func storedPushesMayHaveArrived() {
        for session in sessions.withLock({ Array($0.values) }) { session.storedPushesArrived() }
    }

    /// The device's current session, if it is connected.
    func session(for deviceID: String) -> DeviceSession? {
        sessions.withLock { $0[deviceID] }
    }

    /// How many devices are connected.
    var count: Int { sessions.withLock { $0.count } }
}
