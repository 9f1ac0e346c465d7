import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The gateway's store on PostgreSQL: what several gateway nodes share.
///
/// Every node reads and writes the same tables, so a key registered, a token issued or revoked, or a notification
/// stored on one node holds on all. Nodes wake each other with LISTEN/NOTIFY — a notification stored for a device
/// announces the device's ID on `herald_stored` in the same commit — but the tables are the truth: a node that
/// missed announcements (its listening connection dropped) has every connected device look again.
///
/// Run it as a `Service` (``run()``): a service group of the connection pool and, for a gateway node, the node's
/// coordinator, which listens and keeps this node's heartbeat in `gateway_node`. A node whose heartbeat stops for ``Configuration/nodeTimeout`` is taken for dead by the others:
/// its claims on stored notifications are released, so a device that reconnects elsewhere gets them.
///
/// One repository per aggregate over one ``PostgresGatewayDatabase`` (``PostgresProviderKeyRepository``,
/// ``PostgresDeviceTokenRepository``, ``PostgresBroadcastChannelRepository``, ``PostgresStoredPushRepository``,
/// ``PostgresDeliveryLogRepository``, ``PostgresFCMRepository``); the store answers every aggregate's protocol by
/// asking its repository (``GatewayRepositories``), and is itself what makes it a node (`+NodeCoordination`).
///
/// A write that returned was committed with PostgreSQL's default `synchronous_commit`: durable.
public final class PostgresGatewayStore: SharedGatewayStore, GatewayRepositories, Service {
    /// How the store works with its database.
    public struct Configuration: Sendable {
        /// How long one operation may wait for the database before it counts as unavailable.
        public var operationTimeout: Duration = .seconds(5)
        /// How often this node writes its heartbeat.
        public var heartbeatInterval: Duration = .seconds(2)
        /// How long without a heartbeat before a node is taken for dead.
        public var nodeTimeout: Duration = .seconds(10)
        /// How long to wait before connecting again when the database went away.
        public var reconnectDelay: Duration = .milliseconds(500)
        /// Most connections in the pool.
        public var maximumConnections = 16
        /// Whether this store is a gateway node's: it listens for the other nodes and keeps a heartbeat. A command
        /// that only reads or writes (`herald keys`, `herald tokens`) is not a node.
        public var isNode = true

        /// The defaults.
        public init() {}
    }

    /// This node's ID in `gateway_node`, unique per run.
    public var nodeID: String { database.nodeID }
    /// Where the database is.
    public let url: PostgresDatabaseURL
    /// The pool and what the repositories share besides it.
    public let database: PostgresGatewayDatabase
    public let providerKeyRepository: PostgresProviderKeyRepository
    public let deviceTokenRepository: PostgresDeviceTokenRepository
    public let broadcastChannelRepository: PostgresBroadcastChannelRepository
    public let storedPushRepository: PostgresStoredPushRepository
    public let deliveryLogRepository: PostgresDeliveryLogRepository
    public let fcmRepository: PostgresFCMRepository
    var configuration: Configuration { database.configuration }
    var client: PostgresClient { database.client }
    var logger: Logger { database.logger }
    /// Its place among the other nodes: listener and heartbeat (run by ``run()`` when it is a node).
    let coordinator: PostgresNodeCoordinator
    let prepared = Mutex(false)
    /// Pushes relayed or stored by ``relayOrStore(_:)``, in shared commits: at most 64 a commit, never two for the same
    /// token and topic in one.
    let deliveries = RequestBatcher<StoredNotification, SharedDelivery>(maximumBatch: 64) {
        $0.token + " " + $0.topic
    }

    /// A store on the database at `url`; nothing connects until ``prepare()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - url: The database.
    ///   - configuration: Timeouts and the pool's size.
    ///   - logger: Where connection trouble is reported.
    public init(url: PostgresDatabaseURL, configuration: Configuration = .init(), logger: Logger) throws {
        self.url = url
        let database = try PostgresGatewayDatabase(url: url, configuration: configuration, logger: logger)
        self.database = database
        providerKeyRepository = PostgresProviderKeyRepository(database: database)
        deviceTokenRepository = PostgresDeviceTokenRepository(database: database)
        broadcastChannelRepository = PostgresBroadcastChannelRepository(database: database)
        storedPushRepository = PostgresStoredPushRepository(database: database)
        deliveryLogRepository = PostgresDeliveryLogRepository(database: database)
        fcmRepository = PostgresFCMRepository(database: database)
        coordinator = PostgresNodeCoordinator(
            nodeID: database.nodeID, url: url, configuration: configuration, client: database.client, logger: logger,
            logWrites: (local: database.localLogWrites, all: database.deliveryLogChanges))
    }

    /// Runs `body` with the pool, within the operation timeout; a database that is away, or does not answer in
    /// time, is ``GatewayStoreError/unavailable(_:)``.
    @discardableResult
    package func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await database.perform(body)
    }

    /// ``perform(_:)`` for code that does not hold the store (a batch of writes, run by whichever caller leads).
    @discardableResult
    static func perform<T: Sendable>(
        client: PostgresClient, configuration: Configuration, _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        do {
            return try await OperationDeadline.answer(within: configuration.operationTimeout, orThrow: Self.noAnswer) {
                try await body(client)
            }
        } catch let error as GatewayStoreError {
            throw error
        } catch let error as PSQLError where error.code == .server {
            // The server answered: unavailable only if it is shutting down or cannot take connections (class 57, 08).
            let state = error.serverInfo?[.sqlState] ?? ""
            if state.hasPrefix("57") || state.hasPrefix("08") { throw GatewayStoreError.unavailable(Self.describe(error)) }
            throw error
        } catch {
            throw GatewayStoreError.unavailable(Self.describe(error))
        }
    }

    /// Runs `body`; a transaction's error is the error that failed it (the closure's, else BEGIN's, COMMIT's).
    package static func unwrappingTransactionError<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.beginError ?? error.commitError ?? error
        }
    }

    /// Whether the server rolled the statement back to break a deadlock or a serialization conflict (SQLSTATE 40P01,
    /// 40001): running it again is safe.
    static func isRetryable(_ error: PSQLError) -> Bool {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// What an operation the database did not answer in time throws.
    @Sendable static func noAnswer() -> any Error {
        GatewayStoreError.unavailable("no answer in time")
    }

    /// An error in words: the server's message where there is one.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
