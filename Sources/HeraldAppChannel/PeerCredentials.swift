import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process at the other end of a Unix-domain socket, as the kernel reports it (`SO_PEERCRED`).
package struct PeerCredentials: Sendable, Hashable {
    /// Its process ID at the time it connected.
    package var processID: Int32
    /// Its effective user ID.
    var userID: UInt32
    /// Its effective group ID.
    var groupID: UInt32

    /// This process's effective user ID: the only user the app channel serves.
    static var currentUserID: UInt32 { UInt32(geteuid()) }

    /// The credentials of `channel`'s peer.
    ///
    /// - Throws: When the channel is not a socket or the kernel does not say.
    static func of(_ channel: any Channel) async throws -> PeerCredentials {
        #if os(Linux)
        guard let provider = channel as? any SocketOptionProvider else { throw SocketOptionUnavailable() }
        let credentials: KernelCredentials = try await provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(Self.peerCredentialsOption)
        ).get()
        return PeerCredentials(processID: credentials.pid, userID: credentials.uid, groupID: credentials.gid)
        #else
        // Other systems have getpeereid; Herald's daemon runs on Linux. Only the owner can reach the socket file.
        return PeerCredentials(processID: 0, userID: currentUserID, groupID: UInt32(getegid()))
        #endif
    }

    private struct SocketOptionUnavailable: Error {}

    /// `SO_PEERCRED` (Glibc's module hides it and `struct ucred` behind `_GNU_SOURCE`): 17 on x86-64 and arm64.
    private static let peerCredentialsOption: Int32 = 17

    /// `struct ucred`: three 32-bit fields, laid out as C lays them out.
    private struct KernelCredentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }
}
