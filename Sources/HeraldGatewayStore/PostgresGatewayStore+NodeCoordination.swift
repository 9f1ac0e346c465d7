import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Running as a gateway node: the schema, the pool and the node's coordinator (``PostgresNodeCoordinator``), device
/// presence, and handing pushes to the node a device is connected to.
extension PostgresGatewayStore {
    // MARK: Running

    /// Connects once and brings the schema up to date: throws ``GatewayStoreError`` when the database cannot be
    /// reached or has a newer schema than this build knows.
    public func prepare() async throws {
        if prepared.withLock({ $0 }) { return }
        let connection: PostgresConnection
        do {
            // A connection made just as the deadline passed is closed, never dropped open.
            connection = try await withDeadline(
                configuration.operationTimeout, orThrow: Self.noAnswer, releasingLate: { try? await $0.close() }
            ) { [url, logger] in
                try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 1, logger: logger)
            }
        } catch {
            throw GatewayStoreError.unreachable("\(url)", reason: Self.describe(error))
        }
        do {
            try await migrate(on: connection)
            try? await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
        prepared.withLock { $0 = true }
    }

    /// The schema's version in the database, migrated under an advisory lock (two nodes starting at once migrate
    /// once).
    func migrate(on connection: PostgresConnection) async throws {
        try await Self.unwrappingTransactionError {
            try await self.migrateInTransaction(on: connection)
        }
    }

    func migrateInTransaction(on connection: PostgresConnection) async throws {
        try await connection.withTransaction(logger: logger) { [logger] connection in
            try await Self.migrate(
                to: Self.migrations, recordedIn: "herald_schema", lock: 7_270_617, named: "gateway's", on: connection,
                logger: logger)
        }
    }

    /// Brings a schema up to date inside the caller's transaction, under an advisory lock (two nodes starting at once
    /// migrate once): the versions after the one `versionTable` records are applied in order, each recorded there.
    /// The gateway's schema and the console's (`PostgresConsoleStore`) both come up this way.
    ///
    /// - Parameters:
    ///   - migrations: The versions this build knows, in order: each a list of statements.
    ///   - versionTable: The table that records the versions applied (made if missing).
    ///   - lock: The advisory lock's key, one per schema.
    ///   - name: Whose schema, for the log (`"gateway's"`).
    ///   - connection: A connection in a transaction.
    ///   - logger: Where each version applied is logged.
    /// - Throws: ``GatewayStoreError/newerSchema(found:known:)`` for a database a newer build migrated.
    package static func migrate(
        to migrations: [[String]], recordedIn versionTable: String, lock: Int64, named name: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
        try await connection.query(
            PostgresQuery(
                unsafeSQL:
                    "CREATE TABLE IF NOT EXISTS \(versionTable) (version integer NOT NULL, applied_at double precision NOT NULL)"
            ), logger: logger)
        var version = 0
        for try await found in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT max(version) FROM \(versionTable)"), logger: logger
        ).decode(Int?.self) {
            version = found ?? 0
        }
        guard version <= migrations.count else {
            throw GatewayStoreError.newerSchema(found: version, known: migrations.count)
        }
        for (index, statements) in migrations.enumerated() where index + 1 > version {
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL:
                        "INSERT INTO \(versionTable) (version, applied_at) VALUES (\(index + 1), \(Date().timeIntervalSince1970))"
                ), logger: logger)
            logger.info("Migrated the \(name) PostgreSQL schema", metadata: ["schema.version": "\(index + 1)"])
        }
    }

    /// Runs the pool and, for a node, its coordinator (listener, heartbeat) as a service group until cancelled or
    /// shut down gracefully: the coordinator stops first — this node leaves the registry and gives back its claims
    /// while the pool still runs — then the pool.
    public func run() async throws {
        try await prepare()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: client)]
        if configuration.isNode { services.append(.init(service: coordinator)) }
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        try await group.run()
    }

    /// What other nodes announce, until the store stops: the one consumer is the gateway.
    public func nodeEvents() -> AsyncStream<GatewayNodeEvent> { coordinator.events }

    /// Returns once this node listens for the others' announcements (the first time; at once after that).
    public func waitUntilListening() async { await coordinator.waitUntilListening() }

    public func deviceConnected(deviceID: String, session: String, at date: Date) async throws {
        let payload = "connected \(deviceID) \(nodeID) \(date.timeIntervalSince1970)"
        try await perform { client in
            try await client.query(
                """
                WITH present AS (
                    INSERT INTO device_presence (device_id, node_id, session, connected_at)
                    VALUES (\(deviceID), \(self.nodeID), \(session), \(date.timeIntervalSince1970))
                    ON CONFLICT (device_id) DO UPDATE SET node_id = excluded.node_id, session = excluded.session,
                        connected_at = excluded.connected_at
                    RETURNING 1
                )
                SELECT pg_notify(\(PostgresNodeCoordinator.channel), \(payload)) FROM present
                """)
        }
    }

    public func deviceDisconnected(deviceID: String, session: String) async throws {
        try await perform { client in
            try await client.query(
                """
                DELETE FROM device_presence WHERE device_id = \(deviceID) AND node_id = \(self.nodeID) AND session = \(session)
                """)
        }
    }

    public func relay(_ n: StoredNotification) async throws -> Bool {
        let deadline = Date().timeIntervalSince1970 - configuration.nodeTimeout.timeInterval
        return try await perform { client in
            // One statement, one commit: kept only if the device is connected to a live node, and announced then.
            let rows = try await client.query(
                """
                WITH present AS (
                    SELECT 1 FROM device_presence p JOIN gateway_node n ON n.id = p.node_id
                    WHERE p.device_id = \(n.deviceID) AND n.heartbeat_at >= \(deadline)
                ), saved AS (
                    INSERT INTO relayed_push
                        (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload,
                         received_at, expires_at)
                    SELECT \(n.token), \(n.topic), \(n.deviceID), \(n.bundleID), \(n.apnsID), \(n.uniqueID),
                           \(n.pushType.rawValue), \(n.priority.rawValue), \(n.collapseID), \(n.payload),
                           \(n.receivedAt.timeIntervalSince1970), \(n.expiresAt.timeIntervalSince1970)
                    WHERE EXISTS (SELECT 1 FROM present)
                    RETURNING 1
                ), logged AS (
                    -- Its received event with it, when the store logs it (StoredNotification.loggedAt).
                    INSERT INTO delivery_event (unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type,
                                                priority, collapse_id, expiration, payload, fcm_message)
                    SELECT \(n.uniqueID), \(n.receivedAt.timeIntervalSince1970), 'received', \(DeliveryEvent.receivedDetail),
                           \(n.apnsID), \(n.token), \(n.topic), \(n.sentAs?.door.rawValue), \(n.sentAs?.pushType),
                           \(n.sentAs.map { Int32($0.priority) }), \(n.sentAs?.collapseID), \(n.sentAs?.expiration),
                           \(n.sentAs?.payload), \(n.sentAs?.fcmMessage)
                    FROM saved WHERE \(n.loggedAt != nil)
                )
                SELECT pg_notify(\(PostgresNodeCoordinator.channel), \("stored " + n.deviceID)) FROM saved
                """
            ).collect()
            if !rows.isEmpty && n.loggedAt != nil { self.database.localLogWrites.changed() }
            return !rows.isEmpty
        }
    }

    public func relayOrStore(_ n: StoredNotification) async throws -> SharedDelivery {
        let delivery = try await deliveries.submit(n, execute: relayOrStoreBatch())
        forgetIfGone(n, delivery)
        return delivery
    }

    public func relayOrStore(
        _ n: StoredNotification, completion: @escaping @Sendable (Result<SharedDelivery, any Error>) -> Void
    ) {
        deliveries.submit(n, execute: relayOrStoreBatch()) { result in
            if case .success(let delivery) = result { self.forgetIfGone(n, delivery) }
            completion(result)
        }
    }

    /// Runs one batch of ``relayOrStore(_:)``: relayed to the nodes its devices are connected to — those that beat
    /// within the node timeout from now —, stored otherwise, in one statement and commit.
    private func relayOrStoreBatch() -> @Sendable ([StoredNotification]) async throws -> [SharedDelivery] {
        let deadline = Date().timeIntervalSince1970 - configuration.nodeTimeout.timeInterval
        return { [client, configuration, localLogWrites = database.localLogWrites] batch in
            let deliveries = try await Self.perform(client: client, configuration: configuration) { client in
                // A deadlock with another node's claim or revocation is the database's to break: the loser runs again.
                var attempt = 1
                while true {
                    do {
                        return try await Self.relayOrStore(batch, liveSince: deadline, client: client)
                    } catch let error as PSQLError where attempt < 3 && Self.isRetryable(error) {
                        attempt += 1
                    }
                }
            }
            if batch.contains(where: { $0.loggedAt != nil }) { localLogWrites.changed() }
            return deliveries
        }
    }

    /// A token found revoked or gone is not taken on trust again (``recentlyActiveToken(_:)``).
    private func forgetIfGone(_ n: StoredNotification, _ delivery: SharedDelivery) {
        switch delivery {
        case .revoked, .unknownToken: deviceTokenRepository.forgetActiveToken(n.token)
        case .relayed, .stored: break
        }
    }

    /// Relays or stores a batch of notifications (no two for the same token and topic) in one statement and one
    /// commit: each relayed if its device is connected to a node that has beaten since `deadline`, stored otherwise;
    /// every device announced once.
    /// The logger prepared statements run with (their errors reach the caller as thrown errors).
    static let statementLogger = Logger(label: "herald.gateway.store")

    static func relayOrStore(
        _ batch: [StoredNotification], liveSince deadline: Double, client: PostgresClient
    ) async throws -> [SharedDelivery] {
        var deliveries: [SharedDelivery] = []
        deliveries.reserveCapacity(batch.count)
        for try await (_, relayed, previous, _, known, revokedAt) in try await client.execute(
            RelayOrStoreStatement(batch: batch, liveSince: deadline), logger: Self.statementLogger
        ) {
            if !known {
                deliveries.append(.unknownToken)
            } else if let revokedAt {
                deliveries.append(.revoked(at: Date(timeIntervalSince1970: revokedAt)))
            } else {
                deliveries.append(relayed ? .relayed : .stored(replacing: previous))
            }
        }
        guard deliveries.count == batch.count else { throw BatchAnswerMismatch() }
        return deliveries
    }

    public func recentlyActiveToken(_ token: String) -> DeviceTokenRecord? {
        database.activeTokens.withLock { $0[token.lowercased()] }
    }

    public func announceBroadcast(channelID: String, uniqueID: String) async throws {
        let payload = "broadcast \(channelID) \(uniqueID) \(nodeID)"
        try await perform { client in
            try await client.query("SELECT pg_notify(\(PostgresNodeCoordinator.channel), \(payload))")
        }
    }
}
