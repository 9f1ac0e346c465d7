import Synchronization

/// The device port's open connections: the listener closes them all when it stops, and waits until each is gone —
/// its device's session off the hub.
final class DeviceConnections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: DeviceConnection] = [:]
        var closing = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Counts `connection` as open until it has closed; `false` when the listener is stopping (refuse it).
    func add(_ connection: DeviceConnection) -> Bool {
        state.withLock { state in
            guard !state.closing else { return false }
            state.open[ObjectIdentifier(connection)] = connection
            return true
        }
    }

    /// `connection` closed: its end is run by a task that ``closeAll()`` waits for.
    func closed(_ connection: DeviceConnection) {
        Task {
            await connection.closed()
            let drained = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.open[ObjectIdentifier(connection)] = nil
                guard state.open.isEmpty else { return [] }
                defer { state.drained = [] }
                return state.drained
            }
            for waiter in drained { waiter.resume() }
        }
    }

    /// Closes every connection (devices are asked to, and given ``DeviceChannelServer/shutdownGrace``) and refuses
    /// new ones.
    ///
    /// - Returns: Once every connection has closed and ended.
    func closeAll() async {
        let open = state.withLock { state in
            state.closing = true
            return Array(state.open.values)
        }
        for connection in open { connection.shutDown() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.open.isEmpty { return true }
                state.drained.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
