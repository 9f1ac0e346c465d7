import Synchronization

/// Whether a connected device still answers: pinged at each check, its connection is closed at a check that finds
/// nothing came from it since the last one — not even the pong.
///
/// One check of every connection per interval, from one task (``DeviceLivenessCheck``), instead of a pinging task for
/// each connection (Hummingbird's auto-ping: ~3 KiB of every idle connection).
final class ConnectionLiveness: Sendable {
    private let framesReceived: @Sendable () -> UInt64
    private let ping: @Sendable () -> Void
    private let closeSilent: @Sendable () -> Void
    /// The frames received at the last ping; whether the check closed the connection (once: the session may still be on the
    /// hub at the next check, while its connection closes).
    private let state = Mutex<(readsAtLastPing: UInt64?, closed: Bool)>((nil, false))

    /// Creates the check of one connection.
    ///
    /// - Parameters:
    ///   - framesReceived: How many WebSocket frames came from the device so far (a pong too).
    ///   - ping: Sends the device a WebSocket ping.
    ///   - closeSilent: Closes the connection of a device that no longer answers.
    init(
        framesReceived: @escaping @Sendable () -> UInt64, ping: @escaping @Sendable () -> Void,
        closeSilent: @escaping @Sendable () -> Void
    ) {
        self.framesReceived = framesReceived
        self.ping = ping
        self.closeSilent = closeSilent
    }

    /// Whether anything came from the device since the last check.
    var answeredSinceLastCheck: Bool {
        let reads = framesReceived()
        return state.withLock { $0.readsAtLastPing != reads }
    }

    /// Pings the device, or closes its connection if it was pinged at the last check and nothing came from it since;
    /// nothing once it closed it.
    func check() {
        let reads = framesReceived()
        enum Step { case ping, close, none }
        let step = state.withLock { state -> Step in
            guard !state.closed else { return .none }
            defer { state.readsAtLastPing = reads }
            guard state.readsAtLastPing == reads else { return .ping }
            state.closed = true
            return .close
        }
        switch step {
        case .ping: ping()
        case .close: closeSilent()
        case .none: break
        }
    }
}
