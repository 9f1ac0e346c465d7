import Foundation
import HeraldNotificationEngine
import HeraldStorage
import Logging
import NIOPosix
import Synchronization

/// The device's Live Activities read from their database file, beside the registry that writes it (the test-bed API
/// of `herald up`): opened once it exists, on the blocking-work pool.
package final class LiveActivityFile: Sendable {
    private let url: URL
    private let database = Mutex<SQLiteDatabase?>(nil)

    /// The activities kept at `url` (`<data-dir>/live-activities.sqlite`).
    package init(url: URL) {
        self.url = url
    }

    /// Every activity, oldest first; none while the file does not exist.
    ///
    /// - Throws: When the file cannot be opened or read.
    package func activities() async throws -> [LiveActivityRecord] {
        if let opened = database.withLock({ $0 }) { return try await LiveActivityRegistry.activities(in: opened) }
        let url = url
        let opened = try await NIOThreadPool.singleton.runIfActive { () throws -> SQLiteDatabase? in
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return try SQLiteDatabase(
                url: url, migrator: LiveActivityRegistry.migrator, logger: Logger(label: "herald.activities"))
        }
        guard let opened else { return [] }
        let kept = database.withLock { database in
            if database == nil { database = opened }
            return database!
        }
        return try await LiveActivityRegistry.activities(in: kept)
    }
}
