import Foundation
import HeraldCore
import Logging

/// The gateway's SQLite store (`<data-dir>/gateway.sqlite`), or the same schema in memory for tests.
///
/// Shared by `herald gateway` and the `herald keys|tokens|log` commands: every read goes to the file, so a key
/// registered or a token revoked by another process counts for the next push.
///
/// One repository per aggregate over one ``SQLiteGatewayDatabase`` (``SQLiteProviderKeyRepository``,
/// ``SQLiteDeviceTokenRepository``, ``SQLiteBroadcastChannelRepository``, ``SQLiteStoredPushRepository``,
/// ``SQLiteDeliveryLogRepository``, ``SQLiteFCMRepository``), as on PostgreSQL; the store answers every aggregate's
/// protocol by asking its repository (``GatewayRepositories``).
public final class SQLiteGatewayStore: GatewayRepositories, LocalStoredPushStore {
    /// The database the repositories share.
    public let database: SQLiteGatewayDatabase
    public let providerKeyRepository: SQLiteProviderKeyRepository
    public let deviceTokenRepository: SQLiteDeviceTokenRepository
    public let broadcastChannelRepository: SQLiteBroadcastChannelRepository
    public let storedPushRepository: SQLiteStoredPushRepository
    public let deliveryLogRepository: SQLiteDeliveryLogRepository
    public let fcmRepository: SQLiteFCMRepository
    /// Where a damaged database was moved when this store opened, if it was.
    public var quarantinedFile: URL? { database.quarantinedFile }

    /// Opens (creating if needed) the database at `url`.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - logger: Where the quarantine of a damaged file is reported.
    public convenience init(url: URL, logger: Logger = Logger(label: "herald.gateway.store")) throws {
        self.init(database: try SQLiteGatewayDatabase(url: url, logger: logger))
    }

    /// A store in memory.
    public convenience init() throws {
        self.init(database: try SQLiteGatewayDatabase())
    }

    /// The store of `database`'s repositories.
    ///
    /// - Parameter database: The database they share.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
        providerKeyRepository = SQLiteProviderKeyRepository(database: database)
        deviceTokenRepository = SQLiteDeviceTokenRepository(database: database)
        broadcastChannelRepository = SQLiteBroadcastChannelRepository(database: database)
        storedPushRepository = SQLiteStoredPushRepository(database: database)
        deliveryLogRepository = SQLiteDeliveryLogRepository(database: database)
        fcmRepository = SQLiteFCMRepository(database: database)
    }
}
