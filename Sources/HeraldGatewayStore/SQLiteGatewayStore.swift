import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// The gateway's SQLite store (`<data-dir>/gateway.sqlite`), or the same schema in memory for tests.
///
/// Shared by `herald gateway` and the `herald keys|tokens|log` commands: every read goes to the file, so a key
/// registered or a token revoked by another process counts for the next push.
///
/// Each aggregate is in a file of its own (`SQLiteGatewayStore+ProviderKeys`, `+DeviceTokens`, `+BroadcastChannels`,
/// `+StoredPushes`, `+DeliveryLog`, `+FCM`), the schema's migrations in `+Schema`, as on PostgreSQL.
public final class SQLiteGatewayStore: GatewayStore, LocalStoredPushStore {
    let database: SQLiteDatabase
    /// The tokens this process read or wrote, by token (``knownToken(_:)``).
    let knownTokens = Mutex<[String: DeviceTokenRecord]>([:])
    /// The most tokens ``knownTokens`` holds (about 300 bytes each); past it, others are read from the file each time.
    static let knownTokenLimit = 1_000_000
    var writer: any DatabaseWriter { database.writer }
    var groupCommit: GroupCommitWriter { database.groupCommit }
    public let deliveryLogChanges = ChangeSignal()
    /// Where a damaged database was moved when this store opened, if it was.
    public var quarantinedFile: URL? { database.quarantinedFile }

    /// Opens (creating if needed) the database at `url`.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - logger: Where the quarantine of a damaged file is reported.
    public init(url: URL, logger: Logger = Logger(label: "herald.gateway.store")) throws {
        database = try SQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
    }

    /// A store in memory.
    public init() throws {
        database = try SQLiteDatabase(inMemoryWith: Self.migrator)
    }
}
