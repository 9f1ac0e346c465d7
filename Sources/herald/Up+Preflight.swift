import Foundation
import Glibc
import HeraldCore
import HeraldDevice

extension HeraldCommand.Up {
    /// Checks, before any service starts, the operator token the environment names, that no other device runs on the
    /// data directory and that every port asked for is free: one line that says what to do, instead of a service
    /// group's log lines and errors (issue 70).
    ///
    /// - Parameter directory: The data directory.
    /// - Throws: ``CommandFailure`` naming the data directory, or the port and the option that sets it.
    func preflight(_ directory: HeraldDataDirectory) async throws {
        // What the command line and the environment say comes first: a mistake in them is the one to fix.
        if !noConsole && consolePort != ListenerPort.off {
            _ = try Self.chosenOperatorToken(environment: ProcessInfo.processInfo.environment)
        }
        try await directory.requireNoDeviceRunning()
        var ports = [
            (port, "--port"), (plaintextPort, "--plaintext-port"), (channelsPort, "--channels-port"),
            (devicePort, "--device-port"),
        ]
        if !noConsole { ports.append((consolePort, "--console-port")) }
        if !noFCM { ports.append((fcmPort, "--fcm-port")) }
        for (port, option) in ports where port > 0 && ListenerPort.isInUse(port) {
            throw CommandFailure(
                "port \(port) is in use — is another `herald up` running? Stop it, or pass \(option) with another port (0 picks a free one)."
            )
        }
    }
}

extension HeraldDataDirectory {
    /// Throws when a device already runs on this data directory (`herald up` or `herald device`): a command that would
    /// start one checks before it starts anything.
    ///
    /// - Throws: ``CommandFailure`` naming the directory and what to do.
    func requireNoDeviceRunning() async throws {
        if await DeviceDaemon.isServing(at: appChannelSocket) {
            throw CommandFailure(
                "Another herald up or herald device runs on \(url.path) (its device answers at herald.sock): stop it, or pass another --data-dir."
            )
        }
    }
}

extension ListenerPort {
    /// Whether a listener already holds `port` on the loopback address (a bind that finds it in use; nothing is kept).
    ///
    /// - Parameter port: A TCP port, 1–65535.
    static func isInUse(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var reuse: Int32 = 1  // as NIO's listeners: a port in TIME_WAIT is not "in use"
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound != 0 && errno == EADDRINUSE
    }
}
