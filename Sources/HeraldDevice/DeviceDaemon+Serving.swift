import Foundation
import HeraldAppChannel

extension DeviceDaemon {
    /// Whether a device daemon already answers apps at `socket` (a data directory's `herald.sock`): a command that would
    /// start one checks before it starts anything.
    ///
    /// - Parameter socket: The app channel's socket file.
    package static func isServing(at socket: URL) async -> Bool {
        guard FileManager.default.fileExists(atPath: socket.path),
            let running = try? await AppChannelConnection.connect(to: socket.path)
        else { return false }
        running.close()
        return true
    }
}
