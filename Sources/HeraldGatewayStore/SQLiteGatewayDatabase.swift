import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// The gateway's SQLite database (`<data-dir>/gateway.sqlite`, or the same schema in memory for tests): the connection
/// its repositories share, with what they share besides it — the tokens this process has read or written, and the
/// delivery log's change signal.
///
/// Its schema's migrations are in `SQLiteGatewayDatabase+Schema`; a file is brought up to date when it opens.
public final class SQLiteGatewayDatabase: Sendable {
    let sqlite: SQLiteDatabase
    /// The tokens this process read or wrote, by token (`SQLiteStoredPushRepository.knownToken(_:)`).
    let knownTokens = Mutex<[String: DeviceTokenRecord]>([:])
    /// The most tokens ``knownTokens`` holds (about 300 bytes each); past it, others are read from the file each time.
    static let knownTokenLimit = 1_000_000
    /// Changes to the delivery log (`DeliveryLogStore/deliveryLogChanges`).
    let deliveryLogChanges = ChangeSignal()
    /// Where a damaged database was moved when this one opened, if it was.
    public var quarantinedFile: URL? { sqlite.quarantinedFile }

    /// Opens (creating if needed) the database at `url`.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - logger: Where the quarantine of a damaged file is reported.
    public init(url: URL, logger: Logger = Logger(label: "herald.gateway.store")) throws {
        sqlite = try SQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
    }

    /// A database in memory.
    public init() throws {
        sqlite = try SQLiteDatabase(inMemoryWith: Self.migrator)
    }
}

/// A repository over the gateway's shared SQLite database.
protocol SQLiteGatewayRepository: Sendable {
    /// The database it shares with the others.
    var database: SQLiteGatewayDatabase { get }
}

extension SQLiteGatewayRepository {
    /// Reads (and the rare write that must not wait for a group commit).
    var writer: any DatabaseWriter { database.sqlite.writer }
    /// Writes, committed in groups.
    var groupCommit: GroupCommitWriter { database.sqlite.groupCommit }
}
