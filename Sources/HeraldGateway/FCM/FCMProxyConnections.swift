import NIOCore
import Synchronization

/// The FCM port's open connections, so that shutdown closes them and waits until they have closed.
final class FCMProxyConnections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var closing = false
    }

    private let state = Mutex(State())

    /// Counts `channel` as open until it closes; `false` when the listener is stopping (refuse it).
    func add(_ channel: any Channel) -> Bool {
        let added = state.withLock { state in
            guard !state.closing else { return false }
            state.open[ObjectIdentifier(channel)] = channel
            return true
        }
        if added {
            channel.closeFuture.whenComplete { [self] _ in
                state.withLock { _ = $0.open.removeValue(forKey: ObjectIdentifier(channel)) }
            }
        }
        return added
    }

    /// Closes every connection and refuses new ones; returns once each has closed.
    func closeAll() async {
        let open = state.withLock { state in
            state.closing = true
            return Array(state.open.values)
        }
        for channel in open {
            try? await channel.close()
        }
    }
}
