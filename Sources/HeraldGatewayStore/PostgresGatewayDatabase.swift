import Foundation
import HeraldCore
import Logging
import PostgresNIO
import Synchronization

/// The gateway's PostgreSQL database as its repositories share it: the connection pool, with what they share besides
/// it — the delivery log's change signals, and the tokens this node found active.
public final class PostgresGatewayDatabase: Sendable {
    /// This node's ID in `gateway_node`, unique per run: whose claims the stored notifications' repository takes.
    let nodeID: String
    let client: PostgresClient
    let configuration: PostgresGatewayStore.Configuration
    let logger: Logger
    /// Changes to the delivery log, this node's and (announced by their nodes) the others': a wait on one node answers
    /// for a push another accepted.
    let deliveryLogChanges = ChangeSignal()
    /// This node's own writes to the delivery log (relayed to ``deliveryLogChanges``): what the coordinator announces.
    let localLogWrites = ChangeSignal()
    /// Tokens this node found active (`PostgresGatewayStore.recentlyActiveToken(_:)`), by token.
    let activeTokens = Mutex<[String: DeviceTokenRecord]>([:])
    /// The most tokens ``activeTokens`` keeps.
    static let activeTokenLimit = 100_000
    /// Token lookups, at most 128 a query.
    let tokenLookups = RequestBatcher<String, DeviceTokenRecord?>(maximumBatch: 128) { _ in nil }

    /// The pool for `url`; nothing connects until the pool runs.
    ///
    /// - Parameters:
    ///   - url: The database.
    ///   - configuration: Timeouts and the pool's size.
    ///   - logger: Where connection trouble is reported.
    init(url: PostgresDatabaseURL, configuration: PostgresGatewayStore.Configuration, logger: Logger) throws {
        nodeID = RandomUUID.timeOrderedLowercasedString(at: Date())
        self.configuration = configuration
        self.logger = logger
        var clientConfiguration = try url.clientConfiguration()
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectTimeout = configuration.operationTimeout
        var poolLogger = logger
        poolLogger.logLevel = max(logger.logLevel, .warning)
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: poolLogger)
        localLogWrites.relay(to: deliveryLogChanges)
    }

    /// Runs `body` with the pool, within the operation timeout (`PostgresGatewayStore.perform(client:configuration:_:)`).
    @discardableResult
    func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await PostgresGatewayStore.perform(client: client, configuration: configuration, body)
    }
}

/// A repository over the gateway's shared PostgreSQL database.
protocol PostgresGatewayRepository: Sendable {
    /// The database it shares with the others.
    var database: PostgresGatewayDatabase { get }
}

extension PostgresGatewayRepository {
    /// Where the repository's transactions log.
    var logger: Logger { database.logger }

    /// Runs `body` with the pool, within the operation timeout.
    @discardableResult
    func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await database.perform(body)
    }
}
