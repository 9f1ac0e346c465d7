import Foundation
import HeraldCore
import NIOCore
import Synchronization

/// The devices connected right now: at most one session per device (a new connection replaces the old one).
///
/// Pushes flow one way through it: the dispatcher hands a push to the device's session, or stores it and tells the
/// hub, whose forwarder sends stored pushes to the session for as long as it lasts.
final class DeviceHub: Sendable {
    private let sessions = Mutex<[String: DeviceSession]>([:])
    /// The sessions subscribed to each broadcast channel, by channel ID.
    private let subscribers = Mutex<[String: [ObjectIdentifier: DeviceSession]]>([:])
    private let forwarder: StoredPushForwarder

    /// Creates a hub whose sessions get their stored pushes from `forwarder`.
    init(forwarder: StoredPushForwarder) {
        self.forwarder = forwarder
    }

    /// Makes `session` the device's session (closing the one it replaces) and forwards the device's stored pushes to
    /// it, until ``disconnect(_:)``.
    func connect(_ session: DeviceSession) {
        sessions.withLock { $0.updateValue(session, forKey: session.deviceID) }?.close()
        session.forwardStoredPushes { [forwarder] in await forwarder.forward(to: session) }
    }

    /// Closes `session` and forgets it (unless a newer session of the device replaced it already).
    ///
    /// - Returns: Once the session's work has ended.
    func disconnect(_ session: DeviceSession) async {
        session.close()
        await session.workFinished()
        for channel in session.channels.withLock({ $0 }) { unsubscribe(session, from: channel) }
        sessions.withLock { sessions in
            if sessions[session.deviceID] === session { sessions[session.deviceID] = nil }
        }
    }

    /// Pings every connected device, or disconnects one that did not answer since the last check
    /// (``ConnectionLiveness``).
    func checkLiveness() {
        for session in sessions.withLock({ Array($0.values) }) { session.liveness?.check() }
    }

    /// Sends the channel's broadcasts to `session` from now on, until it unsubscribes or closes.
    func subscribe(_ session: DeviceSession, to channelID: String) {
        session.channels.withLock { _ = $0.insert(channelID) }
        subscribers.withLock { $0[channelID, default: [:]][ObjectIdentifier(session)] = session }
    }

    /// Stops the channel's broadcasts to `session`.
    func unsubscribe(_ session: DeviceSession, from channelID: String) {
        session.channels.withLock { _ = $0.remove(channelID) }
        subscribers.withLock { subscribers in
            subscribers[channelID]?[ObjectIdentifier(session)] = nil
            if subscribers[channelID]?.isEmpty == true { subscribers[channelID] = nil }
        }
    }

    /// Queues `push` for every session subscribed to the channel here; returns how many.
    ///
    /// - Parameters:
    ///   - push: The broadcast, as every device gets it: one message text, one delivery ID (the broadcast's unique
    ///     ID; each session acknowledges its own).
    ///   - channelID: The channel it was published on.
    @discardableResult
    func broadcast(_ push: DevicePush, on channelID: String) -> Int {
        let sessions = subscribers.withLock { $0[channelID].map { Array($0.values) } ?? [] }
        guard !sessions.isEmpty else { return 0 }
        let frame = EncodedPush(push).frame  // one buffer: every subscriber's write shares it
        // One task per event loop writes to all of its connections (not a hop per connection). Always a task, even
        // from the loop itself: each loop runs its tasks in order, so broadcasts reach every device in publish order.
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, sessions: [DeviceSession])] = [:]
        for session in sessions {
            guard let loop = session.eventLoop else {
                session.writeBroadcast(frame)
                continue
            }
            byLoop[ObjectIdentifier(loop), default: (loop, [])].sessions.append(session)
        }
        for (loop, sessions) in byLoop.values {
            loop.execute {
                for session in sessions { session.writeBroadcast(frame) }
            }
        }
        return sessions.count
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

    /// The devices connected now, by device ID.
    var online: [OnlineDevice] {
        sessions.withLock { Array($0.values) }
            .map { OnlineDevice(deviceID: $0.deviceID, connectedAt: $0.connectedAt, channels: $0.channels.withLock { $0.count }) }
            .sorted { $0.deviceID < $1.deviceID }
    }
}
