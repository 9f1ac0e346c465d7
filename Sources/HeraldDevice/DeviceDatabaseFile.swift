import Foundation
import GRDB
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldStorage
import Logging
import NIOPosix
import Synchronization

/// One of the device's database files read beside its owner, which writes it (the test-bed API of `herald up` reads
/// the Live Activities and widgets this way, as `herald activities` reads the file): opened once it exists, on the
/// blocking-work pool.
package final class DeviceDatabaseFile: Sendable {
    private let url: URL
    private let migrator: DatabaseMigrator
    private let opened = Mutex<SQLiteDatabase?>(nil)

    /// The file at `url`, with its owner's migrations.
    init(url: URL, migrator: DatabaseMigrator) {
        self.url = url
        self.migrator = migrator
    }

    /// The database; `nil` while the file does not exist (its owner has kept nothing yet).
    ///
    /// - Throws: When the file cannot be opened.
    func database() async throws -> SQLiteDatabase? {
        if let database = opened.withLock({ $0 }) { return database }
        let (url, migrator) = (url, migrator)
        let database = try await NIOThreadPool.singleton.runIfActive { () throws -> SQLiteDatabase? in
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return try SQLiteDatabase(url: url, migrator: migrator, logger: Logger(label: "herald.device-file"))
        }
        guard let database else { return nil }
        return opened.withLock { opened in
            if opened == nil { opened = database }
            return opened!
        }
    }
}

extension LiveActivityRegistry {
    /// The Live Activities file at `url` (`<data-dir>/live-activities.sqlite`), for reading beside the registry.
    package static func file(at url: URL) -> DeviceDatabaseFile {
        DeviceDatabaseFile(url: url, migrator: migrator)
    }

    /// Every activity kept in `file`, oldest first; none before the registry kept one.
    package static func activities(in file: DeviceDatabaseFile) async throws -> [LiveActivityRecord] {
        guard let database = try await file.database() else { return [] }
        return try await activities(in: database)
    }
}

extension WidgetRouter {
    /// The widgets file at `url` (`<data-dir>/widgets.sqlite`), for reading beside the router.
    package static func file(at url: URL) -> DeviceDatabaseFile {
        DeviceDatabaseFile(url: url, migrator: migrator)
    }

    /// Every app's widgets and controls kept in `file`, by app and kind; none before an app declared one.
    package static func widgets(in file: DeviceDatabaseFile) async throws -> [WidgetStatus] {
        guard let database = try await file.database() else { return [] }
        return try await list(in: database)
    }
}

extension VoIPPushRouter {
    /// The PushKit file at `url` (`<data-dir>/pushkit.sqlite`), for reading beside the router.
    package static func file(at url: URL) -> DeviceDatabaseFile {
        DeviceDatabaseFile(url: url, migrator: migrator)
    }

    /// Every VoIP push kept in `file` and what became of it, oldest first; none before the router kept one.
    package static func records(in file: DeviceDatabaseFile) async throws -> [VoIPPushRecord] {
        guard let database = try await file.database() else { return [] }
        return try await records(in: database)
    }
}

extension WebPushAgent {
    /// The web push file at `url` (`<data-dir>/webpush.sqlite`), for reading beside the agent.
    package static func file(at url: URL) -> DeviceDatabaseFile {
        DeviceDatabaseFile(url: url, migrator: migrator)
    }

    /// Every message recorded in `file`, oldest first; none before the agent kept a subscription.
    package static func messages(in file: DeviceDatabaseFile) async throws -> [WebPushMessageRecord] {
        guard let database = try await file.database() else { return [] }
        return try await messages(in: database)
    }
}
