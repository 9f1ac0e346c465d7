import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Running as a gateway node: the pool, the schema, LISTEN/NOTIFY between nodes, the heartbeat, and handing pushes
/// to the node a device is connected to.
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
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7270617)", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS herald_schema (version integer NOT NULL, applied_at double precision NOT NULL)",
                logger: logger)
            var version = 0
            for try await found in try await connection.query("SELECT max(version) FROM herald_schema", logger: logger)
                .decode(Int?.self)
            {
                version = found ?? 0
            }
            guard version <= Self.migrations.count else {
                throw GatewayStoreError.newerSchema(found: version, known: Self.migrations.count)
            }
            for (index, statements) in Self.migrations.enumerated() where index + 1 > version {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO herald_schema (version, applied_at) VALUES (\(index + 1), \(Date().timeIntervalSince1970))",
                    logger: logger)
                logger.info("Migrated the gateway's PostgreSQL schema", metadata: ["schema.version": "\(index + 1)"])
            }
        }
    }

    /// Runs the pool, the listener and the heartbeat until cancelled or shut down gracefully; then takes this node
    /// out of the registry and gives back its claims.
    public func run() async throws {
        try await prepare()
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            if configuration.isNode {
                group.addTask { await self.listen() }
                group.addTask { await self.keepHeartbeat() }
            }
            // Until graceful shutdown, or cancellation.
            try? await gracefulShutdown()
            if configuration.isNode {
                try? await self.perform { client in try await Self.forget(node: self.nodeID, client: client) }
            }
            eventContinuation.finish()
            group.cancelAll()
        }
    }

    /// Listens for other nodes' announcements on a connection of its own, connecting again whenever it drops;
    /// after a drop, every connected device looks again (what was announced meanwhile is lost).
    func listen() async {
        var first = true
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try url.connectionConfiguration(), id: 2, logger: logger)
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        self.markListening()
                        if !first { eventContinuation.yield(.missedEvents) }
                        first = false
                        for try await notification in notifications {
                            for event in self.events(notification.payload) { eventContinuation.yield(event) }
                        }
                    }
                    try? await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Lost the PostgreSQL listener; connecting again", metadata: ["error": "\(Self.describe(error))"])
            }
            first = false
            try? await Task.sleep(for: configuration.reconnectDelay)
        }
    }

    /// Returns once this node listens for the others' announcements (the first time; at once after that).
    public func waitUntilListening() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let listening = listeners.withLock { state -> Bool in
                if state.listening { return true }
                state.waiting.append(continuation)
                return false
            }
            if listening { continuation.resume() }
        }
    }

    func markListening() {
        let waiting = listeners.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.listening = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Writes this node's heartbeat, and releases the claims of nodes whose heartbeat stopped.
    func keepHeartbeat() async {
        let started = Date().timeIntervalSince1970
        while !Task.isCancelled {
            do {
                let now = Date().timeIntervalSince1970
                let deadline = now - configuration.nodeTimeout.timeInterval
                try await perform { client in
                    try await client.query(
                        """
                        INSERT INTO gateway_node (id, started_at, heartbeat_at) VALUES (\(self.nodeID), \(started), \(now))
                        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                        """)
                    let dead = try await client.query(
                        "DELETE FROM gateway_node WHERE heartbeat_at < \(deadline) RETURNING id"
                    ).collect().compactMap { try? $0.decode(String.self) }
                    for node in dead {
                        try await Self.forget(node: node, client: client)
                        self.logger.warning(
                            "A gateway node stopped; released its claims and forgot its devices", metadata: ["node.id": "\(node)"]
                        )
                    }
                }
            } catch {
                logger.warning("Could not write this node's heartbeat", metadata: ["error": "\(Self.describe(error))"])
            }
            try? await Task.sleep(for: configuration.heartbeatInterval)
        }
    }

    /// The events an announcement stands for; none for this node's own connections and for what it cannot read.
    func events(_ payload: String) -> [GatewayNodeEvent] {
        let parts = payload.split(separator: " ").map(String.init)
        switch parts.first {
        case "stored":
            return parts.dropFirst().map { .storedPushArrived(deviceID: $0) }
        case "broadcast" where parts.count == 4 && parts[3] != nodeID:
            return [.broadcastPublished(channelID: parts[1], uniqueID: parts[2])]
        case "connected" where parts.count == 4 && parts[2] != nodeID:
            guard let seconds = Double(parts[3]) else { return [] }
            return [.deviceConnected(deviceID: parts[1], nodeID: parts[2], at: Date(timeIntervalSince1970: seconds))]
        default:
            return []
        }
    }

    /// Takes a node that stopped (or is stopping) out: its claims are released (and their devices announced, for
    /// their sessions elsewhere), its devices no longer connected.
    static func forget(node: String, client: PostgresClient) async throws {
        let claims = node + "/%"
        _ = try await client.query(
            """
            WITH stored AS (
                UPDATE stored_notification SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by LIKE \(claims)
                RETURNING device_id
            ), relayed AS (
                UPDATE relayed_push SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by LIKE \(claims)
                RETURNING device_id
            ), presence AS (
                DELETE FROM device_presence WHERE node_id = \(node)
            ), registry AS (
                DELETE FROM gateway_node WHERE id = \(node)
            )
            SELECT pg_notify(\(Self.channel), 'stored ' || device_id)
            FROM (SELECT device_id FROM stored UNION SELECT device_id FROM relayed) AS released
            """
        ).collect()
    }

    /// What other nodes announce, until the store stops: the one consumer is the gateway.
    public func nodeEvents() -> AsyncStream<GatewayNodeEvent> { events }

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
                SELECT pg_notify(\(Self.channel), \(payload)) FROM present
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
                )
                SELECT pg_notify(\(Self.channel), \("stored " + n.deviceID)) FROM saved
                """
            ).collect()
            return !rows.isEmpty
        }
    }

    public func relayOrStore(_ n: StoredNotification) async throws -> SharedDelivery {
        let deadline = Date().timeIntervalSince1970 - configuration.nodeTimeout.timeInterval
        let delivery = try await deliveries.submit(n) { [client, configuration] batch in
            try await Self.perform(client: client, configuration: configuration) { client in
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
        }
        switch delivery {
        case .revoked, .unknownToken: forgetActiveToken(n.token)
        case .relayed, .stored: break
        }
        return delivery
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
        activeTokens.withLock { $0[token.lowercased()] }
    }

    public func announceBroadcast(channelID: String, uniqueID: String) async throws {
        let payload = "broadcast \(channelID) \(uniqueID) \(nodeID)"
        try await perform { client in
            try await client.query("SELECT pg_notify(\(Self.channel), \(payload))")
        }
    }
}
