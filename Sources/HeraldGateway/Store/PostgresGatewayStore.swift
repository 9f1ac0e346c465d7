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
/// Run it as a `Service` (``run()``): it runs the connection pool, listens, and keeps this node's heartbeat in
/// `gateway_node`. A node whose heartbeat stops for ``Configuration/nodeTimeout`` is taken for dead by the others:
/// its claims on stored notifications are released, so a device that reconnects elsewhere gets them.
///
/// A write that returned was committed with PostgreSQL's default `synchronous_commit`: durable.
public final class PostgresGatewayStore: SharedGatewayStore, Service {
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
    public let nodeID: String
    /// Where the database is.
    public let url: PostgresDatabaseURL
    private let configuration: Configuration
    private let client: PostgresClient
    private let logger: Logger
    private let events: AsyncStream<GatewayNodeEvent>
    private let eventContinuation: AsyncStream<GatewayNodeEvent>.Continuation
    private let prepared = Mutex(false)
    /// Whether the listener has begun once, and who waits for it.
    private let listeners = Mutex<(listening: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    /// Tokens this node found active (``recentlyActiveToken(_:)``), by token.
    private let activeTokens = Mutex<[String: DeviceTokenRecord]>([:])
    /// The most tokens ``activeTokens`` keeps.
    static let activeTokenLimit = 100_000
    /// Token lookups, at most 128 a query.
    private let tokenLookups = RequestBatcher<String, DeviceTokenRecord?>(maximumBatch: 128) { _ in nil }
    /// Pushes relayed or stored by ``relayOrStore(_:)``, in shared commits: at most 64 a commit, never two for the same
    /// token and topic in one.
    private let deliveries = RequestBatcher<StoredNotification, SharedDelivery>(maximumBatch: 64) {
        $0.token + " " + $0.topic
    }

    /// The schema versions this build knows, in order: each a list of statements.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE provider_key (
                key_id text PRIMARY KEY, team_id text NOT NULL, public_key text NOT NULL, environment text,
                topics text NOT NULL, created_at double precision NOT NULL)
            """,
            "CREATE TABLE device (id text PRIMARY KEY, secret_hash bytea, created_at double precision NOT NULL)",
            """
            CREATE TABLE device_token (
                token text PRIMARY KEY, device_id text NOT NULL REFERENCES device(id), bundle_id text NOT NULL,
                environment text NOT NULL, created_at double precision NOT NULL, revoked_at double precision)
            """,
            // One active token per device, app and environment, whichever node issues it.
            """
            CREATE UNIQUE INDEX device_token_active ON device_token(device_id, bundle_id, environment)
                WHERE revoked_at IS NULL
            """,
            """
            CREATE TABLE stored_notification (
                token text NOT NULL, topic text NOT NULL, device_id text NOT NULL, bundle_id text NOT NULL,
                apns_id text NOT NULL, unique_id text NOT NULL, push_type text NOT NULL, priority integer NOT NULL,
                collapse_id text, payload bytea NOT NULL, received_at double precision NOT NULL,
                expires_at double precision NOT NULL, seq bigserial NOT NULL,
                claimed_by text, claimed_until double precision,
                PRIMARY KEY (token, topic))
            """,
            "CREATE INDEX stored_by_device ON stored_notification(device_id, received_at, seq)",
            """
            CREATE TABLE delivery_event (
                id bigserial PRIMARY KEY, unique_id text NOT NULL, at double precision NOT NULL, kind text NOT NULL,
                detail text NOT NULL)
            """,
            "CREATE INDEX delivery_event_by_id ON delivery_event(unique_id)",
            """
            CREATE TABLE gateway_node (
                id text PRIMARY KEY, started_at double precision NOT NULL, heartbeat_at double precision NOT NULL)
            """,
            // Pushes one node accepted for a device connected to another: each kept until a session takes it.
            """
            CREATE TABLE relayed_push (
                seq bigserial PRIMARY KEY, token text NOT NULL, topic text NOT NULL, device_id text NOT NULL,
                bundle_id text NOT NULL, apns_id text NOT NULL, unique_id text NOT NULL, push_type text NOT NULL,
                priority integer NOT NULL, collapse_id text, payload bytea NOT NULL,
                received_at double precision NOT NULL, expires_at double precision NOT NULL,
                claimed_by text, claimed_until double precision)
            """,
            "CREATE INDEX relayed_by_device ON relayed_push(device_id, seq)",
            "CREATE INDEX relayed_by_unique_id ON relayed_push(unique_id)",
            // Which node each connected device is connected to (its latest session).
            """
            CREATE TABLE device_presence (
                device_id text PRIMARY KEY, node_id text NOT NULL, session text NOT NULL,
                connected_at double precision NOT NULL)
            """,
        ],
        // 2: broadcast channels.
        [
            """
            CREATE TABLE broadcast_channel (
                id text PRIMARY KEY, bundle_id text NOT NULL, environment text NOT NULL, storage_policy integer NOT NULL,
                push_type text NOT NULL, created_at double precision NOT NULL, seq bigserial NOT NULL)
            """,
            "CREATE INDEX broadcast_channel_by_app ON broadcast_channel(bundle_id, environment, seq)",
            """
            CREATE TABLE channel_message (
                channel_id text PRIMARY KEY, bundle_id text NOT NULL, unique_id text NOT NULL, request_id text NOT NULL,
                priority integer NOT NULL, payload bytea NOT NULL, received_at double precision NOT NULL,
                expires_at double precision NOT NULL)
            """,
        ],
        // 3: a token per purpose (the app's notifications '', VoIP, each Live Activity, push-to-start).
        [
            "ALTER TABLE device_token ADD COLUMN purpose text NOT NULL DEFAULT ''",
            "DROP INDEX device_token_active",
            """
            CREATE UNIQUE INDEX device_token_active ON device_token(device_id, bundle_id, environment, purpose)
                WHERE revoked_at IS NULL
            """,
        ],
        // 4: console operator tokens (their SHA-256).
        [
            "CREATE TABLE operator_token (hash text PRIMARY KEY, created_at double precision NOT NULL, revoked_at double precision)"
        ],
        // 5: the delivery log searchable by apns-id, token and topic (on `received` events); the console's history.
        [
            "ALTER TABLE delivery_event ADD COLUMN apns_id text, ADD COLUMN recipient text, ADD COLUMN topic text",
            """
            CREATE TABLE console_send (
                id text PRIMARY KEY, sent_at double precision NOT NULL, form text NOT NULL, status integer NOT NULL,
                reason text, apns_id text, unique_id text)
            """,
        ],
    ]

    /// The channel nodes announce on: `stored <device ID> …` when notifications were stored for devices (sent in the
    /// storing commit), `connected <device ID> <node ID> <seconds since 1970>` when a device connected to a node,
    /// `broadcast <channel ID> <unique ID> <node ID>` when a node published a broadcast.
    static let channel = "herald_gateway"

    /// A store on the database at `url`; nothing connects until ``prepare()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - url: The database.
    ///   - configuration: Timeouts and the pool's size.
    ///   - logger: Where connection trouble is reported.
    public init(url: PostgresDatabaseURL, configuration: Configuration = .init(), logger: Logger) throws {
        self.url = url
        self.configuration = configuration
        self.logger = logger
        self.nodeID = RandomUUID.timeOrderedLowercasedString(at: Date())
        var clientConfiguration = try url.clientConfiguration()
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectTimeout = configuration.operationTimeout
        var poolLogger = logger
        poolLogger.logLevel = max(logger.logLevel, .warning)
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: poolLogger)
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4_096))
    }

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
    private func migrate(on connection: PostgresConnection) async throws {
        try await Self.unwrappingTransactionError {
            try await self.migrateInTransaction(on: connection)
        }
    }

    private func migrateInTransaction(on connection: PostgresConnection) async throws {
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
    private func listen() async {
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

    private func markListening() {
        let waiting = listeners.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.listening = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Writes this node's heartbeat, and releases the claims of nodes whose heartbeat stopped.
    private func keepHeartbeat() async {
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
    private func events(_ payload: String) -> [GatewayNodeEvent] {
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
    private static func forget(node: String, client: PostgresClient) async throws {
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
    private static let statementLogger = Logger(label: "herald.gateway.store")

    private static func relayOrStore(
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

    /// Runs `body` with the pool, within the operation timeout; a database that is away, or does not answer in
    /// time, is ``GatewayStoreError/unavailable(_:)``.
    @discardableResult
    private func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await Self.perform(client: client, configuration: configuration, body)
    }

    /// ``perform(_:)`` for code that does not hold the store (a batch of writes, run by whichever caller leads).
    @discardableResult
    private static func perform<T: Sendable>(
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
    static func unwrappingTransactionError<T>(_ body: () async throws -> T) async throws -> T {
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
    @Sendable private static func noAnswer() -> any Error {
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

    // MARK: Keys

    public func providerKey(id: String) async throws -> ProviderKeyRecord? {
        try await perform { client in
            try await client.query("SELECT \(unescaped: Self.keyColumns) FROM provider_key WHERE key_id = \(id)")
                .collect().first.map(Self.key)
        }
    }

    public func providerKeys() async throws -> [ProviderKeyRecord] {
        try await perform { client in
            try await client.query("SELECT \(unescaped: Self.keyColumns) FROM provider_key ORDER BY created_at")
                .collect().map(Self.key)
        }
    }

    public func saveProviderKey(_ key: ProviderKeyRecord) async throws {
        try await perform { client in
            try await client.query(
                """
                INSERT INTO provider_key (key_id, team_id, public_key, environment, topics, created_at)
                VALUES (\(key.keyID), \(key.teamID), \(key.publicKeyPEM), \(key.environment?.rawValue),
                        \(key.topics.joined(separator: " ")), \(key.createdAt.timeIntervalSince1970))
                ON CONFLICT (key_id) DO UPDATE SET team_id = excluded.team_id, public_key = excluded.public_key,
                    environment = excluded.environment, topics = excluded.topics, created_at = excluded.created_at
                """)
        }
    }

    private static let keyColumns = "key_id, team_id, public_key, environment, topics, created_at"

    private static func key(_ row: PostgresRow) throws -> ProviderKeyRecord {
        let (keyID, teamID, pem, environment, topics, createdAt) = try row.decode(
            (String, String, String, String?, String, Double).self)
        return ProviderKeyRecord(
            keyID: keyID, teamID: teamID, publicKeyPEM: pem, environment: environment.flatMap(APNsEnvironment.init(rawValue:)),
            topics: topics.split(separator: " ").map(String.init), createdAt: Date(timeIntervalSince1970: createdAt))
    }

    // MARK: Devices and tokens

    public func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment {
        try await perform { client in
            guard let row = try await client.query("SELECT secret_hash FROM device WHERE id = \(deviceID)").collect().first
            else { return .unknown }
            return try row.decode(Data?.self).map { .secret(hash: $0) } ?? .withoutSecret
        }
    }

    public func enrollDevice(id: String, secretHash: Data?, at: Date) async throws {
        try await perform { client in
            try await client.query(
                """
                INSERT INTO device (id, secret_hash, created_at) VALUES (\(id), \(secretHash), \(at.timeIntervalSince1970))
                ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash WHERE device.secret_hash IS NULL
                """)
        }
    }

    public func recentlyActiveToken(_ token: String) -> DeviceTokenRecord? {
        activeTokens.withLock { $0[token.lowercased()] }
    }

    /// Forgets that the token was active (it was found revoked, or unknown).
    private func forgetActiveToken(_ token: String) {
        _ = activeTokens.withLock { $0.removeValue(forKey: token) }
    }

    public func token(_ token: String) async throws -> DeviceTokenRecord? {
        let record = try await lookUpToken(token)
        activeTokens.withLock { tokens in
            if let record, record.revokedAt == nil {
                // A bound on memory: start again rather than grow without end.
                if tokens.count >= Self.activeTokenLimit { tokens.removeAll(keepingCapacity: true) }
                tokens[record.token] = record
            } else {
                tokens.removeValue(forKey: token.lowercased())
            }
        }
        return record
    }

    /// The token's record as the database has it now.
    private func lookUpToken(_ token: String) async throws -> DeviceTokenRecord? {
        // Every push looks its token up: concurrent lookups share one query (each sees what was committed before it
        // was asked, so a revocation on any node holds at once).
        try await tokenLookups.submit(token.lowercased()) { [client, configuration] tokens in
            try await Self.perform(client: client, configuration: configuration) { client in
                var records: [String: DeviceTokenRecord] = [:]
                for try await record in try await client.execute(TokenLookup(tokens: tokens), logger: Self.statementLogger) {
                    records[record.token] = record
                }
                return tokens.map { records[$0] }
            }
        }
    }

    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date
    ) async throws -> DeviceTokenRecord {
        let candidate = DeviceToken.random().hex
        return try await perform { client in
            // The device row, a new token unless one is active (the partial unique index settles a race between
            // nodes), then the active one.
            try await client.query(
                """
                INSERT INTO device (id, secret_hash, created_at) VALUES (\(deviceID), NULL, \(at.timeIntervalSince1970))
                ON CONFLICT (id) DO NOTHING
                """)
            try await client.query(
                """
                INSERT INTO device_token (token, device_id, bundle_id, environment, created_at, purpose)
                VALUES (
                    \(candidate), \(deviceID), \(bundleID), \(environment.rawValue), \(at.timeIntervalSince1970),
                    \(purpose.rawValue))
                ON CONFLICT (device_id, bundle_id, environment, purpose) WHERE revoked_at IS NULL DO NOTHING
                """)
            guard
                let row = try await client.query(
                    """
                    SELECT \(unescaped: Self.tokenColumns) FROM device_token
                    WHERE device_id = \(deviceID) AND bundle_id = \(bundleID) AND environment = \(environment.rawValue)
                    AND purpose = \(purpose.rawValue) AND revoked_at IS NULL
                    """
                ).collect().first
            else { throw GatewayStoreError.unavailable("the token issued for \(deviceID) was revoked at once") }
            return try Self.tokenRecord(row)
        }
    }

    public func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.tokenColumns) FROM device_token \(unescaped: includingRevoked ? "" : "WHERE revoked_at IS NULL")
                ORDER BY device_id, bundle_id, environment, created_at
                """
            ).collect().map(Self.tokenRecord)
        }
    }

    public func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord? {
        let key = token.lowercased()
        forgetActiveToken(key)
        return try await perform { [logger] client in
            try await Self.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        "UPDATE device_token SET revoked_at = \(at.timeIntervalSince1970) WHERE token = \(key) AND revoked_at IS NULL",
                        logger: logger)
                    // Stored notifications for a revoked token will never be delivered (D-08).
                    try await connection.query("DELETE FROM stored_notification WHERE token = \(key)", logger: logger)
                    return try await connection.query(
                        "SELECT \(unescaped: Self.tokenColumns) FROM device_token WHERE token = \(key)", logger: logger
                    ).collect().first.map(Self.tokenRecord)
                }
            }
        }
    }

    private static let tokenColumns = "token, device_id, bundle_id, environment, created_at, revoked_at, purpose"

    /// The records of a batch of tokens, prepared once per connection.
    private struct TokenLookup: PostgresPreparedStatement {
        static let name = "herald_token_lookup_v2"
        static let sql = "SELECT \(PostgresGatewayStore.tokenColumns) FROM device_token WHERE token = ANY($1::text[])"
        typealias Row = DeviceTokenRecord
        var tokens: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(tokens)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> DeviceTokenRecord {
            try PostgresGatewayStore.tokenRecord(row)
        }
    }

    private static func tokenRecord(_ row: PostgresRow) throws -> DeviceTokenRecord {
        let (token, deviceID, bundleID, environment, createdAt, revokedAt, purpose) = try row.decode(
            (String, String, String, String, Double, Double?, String).self)
        return DeviceTokenRecord(
            token: token, deviceID: deviceID, bundleID: bundleID,
            environment: APNsEnvironment(rawValue: environment) ?? .development,
            createdAt: Date(timeIntervalSince1970: createdAt), revokedAt: revokedAt.map(Date.init(timeIntervalSince1970:)),
            purpose: TokenPurpose(rawValue: purpose) ?? .app)
    }

    // MARK: Console operators

    public func addOperatorToken(_ token: OperatorTokenRecord) async throws {
        try await perform { client in
            try await client.query(
                "INSERT INTO operator_token (hash, created_at, revoked_at) VALUES (\(token.hash), \(token.createdAt.timeIntervalSince1970), \(token.revokedAt?.timeIntervalSince1970))"
            )
        }
    }

    public func operatorToken(hash: String) async throws -> OperatorTokenRecord? {
        try await perform { client in
            try await client.query("SELECT hash, created_at, revoked_at FROM operator_token WHERE hash = \(hash)")
                .collect().first.map { row in
                    let (hash, createdAt, revokedAt) = try row.decode((String, Double, Double?).self)
                    return OperatorTokenRecord(
                        hash: hash, createdAt: Date(timeIntervalSince1970: createdAt),
                        revokedAt: revokedAt.map(Date.init(timeIntervalSince1970:)))
                }
        }
    }

    public func revokeOperatorTokens(hash: String?, at: Date) async throws -> Int {
        try await perform { client in
            let rows: [PostgresRow] =
                if let hash {
                    try await client.query(
                        "UPDATE operator_token SET revoked_at = \(at.timeIntervalSince1970) WHERE hash = \(hash) AND revoked_at IS NULL RETURNING hash"
                    ).collect()
                } else {
                    try await client.query(
                        "UPDATE operator_token SET revoked_at = \(at.timeIntervalSince1970) WHERE revoked_at IS NULL RETURNING hash"
                    ).collect()
                }
            return rows.count
        }
    }

    // MARK: Broadcast channels

    public func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool {
        try await perform { [logger] client in
            try await Self.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    // One creation per app and environment at a time, on every node: the count holds until the commit.
                    let app = channel.bundleID + " " + channel.environment.rawValue
                    try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(app)))", logger: logger)
                    let count =
                        try await connection.query(
                            """
                            SELECT count(*)::integer FROM broadcast_channel
                            WHERE bundle_id = \(channel.bundleID) AND environment = \(channel.environment.rawValue)
                            """, logger: logger
                        ).collect().first?.decode(Int.self) ?? 0
                    guard count < limit else { return false }
                    try await connection.query(
                        """
                        INSERT INTO broadcast_channel (id, bundle_id, environment, storage_policy, push_type, created_at)
                        VALUES (\(channel.id), \(channel.bundleID), \(channel.environment.rawValue),
                                \(channel.storagePolicy.rawValue), \(channel.pushType), \(channel.createdAt.timeIntervalSince1970))
                        """, logger: logger)
                    return true
                }
            }
        }
    }

    public func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord? {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM broadcast_channel
                WHERE id = \(id) AND bundle_id = \(bundleID) AND environment = \(environment.rawValue)
                """
            ).collect().first.map(Self.channelRecord)
        }
    }

    public func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM broadcast_channel
                WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue) ORDER BY seq
                """
            ).collect().map(Self.channelRecord)
        }
    }

    public func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool {
        try await perform { client in
            try await !client.query(
                """
                DELETE FROM broadcast_channel
                WHERE id = \(id) AND bundle_id = \(bundleID) AND environment = \(environment.rawValue) RETURNING 1
                """
            ).collect().isEmpty
        }
    }

    public func announceBroadcast(channelID: String, uniqueID: String) async throws {
        let payload = "broadcast \(channelID) \(uniqueID) \(nodeID)"
        try await perform { client in
            try await client.query("SELECT pg_notify(\(Self.channel), \(payload))")
        }
    }

    public func keepChannelMessage(_ m: ChannelMessage) async throws {
        try await perform { client in
            try await client.query(
                """
                INSERT INTO channel_message
                    (channel_id, bundle_id, unique_id, request_id, priority, payload, received_at, expires_at)
                VALUES (\(m.channelID), \(m.bundleID), \(m.uniqueID), \(m.requestID), \(m.priority), \(m.payload),
                        \(m.receivedAt.timeIntervalSince1970), \(m.expiresAt.timeIntervalSince1970))
                ON CONFLICT (channel_id) DO UPDATE SET
                    bundle_id = excluded.bundle_id, unique_id = excluded.unique_id, request_id = excluded.request_id,
                    priority = excluded.priority, payload = excluded.payload, received_at = excluded.received_at,
                    expires_at = excluded.expires_at
                """)
        }
    }

    public func channelMessage(channelID: String) async throws -> ChannelMessage? {
        try await perform { client in
            try await client.query(
                """
                SELECT channel_id, bundle_id, unique_id, request_id, priority, payload, received_at, expires_at
                FROM channel_message WHERE channel_id = \(channelID)
                """
            ).collect().first.map { row in
                let (channelID, bundleID, uniqueID, requestID, priority, payload, receivedAt, expiresAt) = try row.decode(
                    (String, String, String, String, Int, Data, Double, Double).self)
                return ChannelMessage(
                    channelID: channelID, bundleID: bundleID, uniqueID: uniqueID, requestID: requestID, priority: priority,
                    payload: payload, receivedAt: Date(timeIntervalSince1970: receivedAt),
                    expiresAt: Date(timeIntervalSince1970: expiresAt))
            }
        }
    }

    private static let channelColumns = "id, bundle_id, environment, storage_policy, push_type, created_at"

    private static func channelRecord(_ row: PostgresRow) throws -> BroadcastChannelRecord {
        let (id, bundleID, environment, policy, pushType, createdAt) = try row.decode(
            (String, String, String, Int, String, Double).self)
        return BroadcastChannelRecord(
            id: id, bundleID: bundleID, environment: APNsEnvironment(rawValue: environment) ?? .development,
            storagePolicy: BroadcastChannelRecord.StoragePolicy(rawValue: policy) ?? .noMessageStored, pushType: pushType,
            createdAt: Date(timeIntervalSince1970: createdAt))
    }

    // MARK: Stored notifications

    public func store(_ n: StoredNotification) async throws -> String? {
        try await perform { client in
            // One statement, one commit: the previous notification's unique id, the new row (unclaimed), and the
            // device's announcement, which every node gets at the commit.
            let rows = try await client.query(
                """
                WITH previous AS (
                    SELECT unique_id FROM stored_notification WHERE token = \(n.token) AND topic = \(n.topic)
                ), saved AS (
                    INSERT INTO stored_notification
                        (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload,
                         received_at, expires_at)
                    VALUES (\(n.token), \(n.topic), \(n.deviceID), \(n.bundleID), \(n.apnsID), \(n.uniqueID),
                            \(n.pushType.rawValue), \(n.priority.rawValue), \(n.collapseID), \(n.payload),
                            \(n.receivedAt.timeIntervalSince1970), \(n.expiresAt.timeIntervalSince1970))
                    \(unescaped: Self.replaceStoredNotification)
                    RETURNING 1
                )
                SELECT (SELECT unique_id FROM previous), pg_notify(\(Self.channel), \("stored " + n.deviceID)) FROM saved
                """
            ).collect()
            return try rows.first?.decode((String?, String).self).0
        }
    }

    /// What storing over a kept notification for the same token and topic does: the new one replaces it, unclaimed,
    /// at the end of the device's order.
    static let replaceStoredNotification = """
        ON CONFLICT (token, topic) DO UPDATE SET
            device_id = excluded.device_id, bundle_id = excluded.bundle_id, apns_id = excluded.apns_id,
            unique_id = excluded.unique_id, push_type = excluded.push_type, priority = excluded.priority,
            collapse_id = excluded.collapse_id, payload = excluded.payload, received_at = excluded.received_at,
            expires_at = excluded.expires_at, seq = nextval(pg_get_serial_sequence('stored_notification', 'seq')),
            claimed_by = NULL, claimed_until = NULL
        """

    public func storedNotifications(deviceID: String) async throws -> [StoredNotification] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.storedColumns) FROM stored_notification WHERE device_id = \(deviceID)
                ORDER BY received_at, seq
                """
            ).collect().map(Self.stored).map(\.notification)
        }
    }

    public func claimStoredNotifications(
        deviceID: String, claimant: String, until: Date, now: Date, limit: Int
    ) async throws -> [StoredNotification] {
        let claim = nodeID + "/" + claimant
        return try await perform { client in
            // Rows another claimant holds (a session of the same device on another node) are skipped, not waited
            // for: each stored or relayed notification goes to one session. Stored ones first (they are older).
            let stored = try await client.query(
                """
                UPDATE stored_notification SET claimed_by = \(claim), claimed_until = \(until.timeIntervalSince1970)
                WHERE (token, topic) IN (
                    SELECT token, topic FROM stored_notification
                    WHERE device_id = \(deviceID)
                      AND (claimed_by IS NULL OR claimed_by = \(claim) OR claimed_until < \(now.timeIntervalSince1970))
                    ORDER BY received_at, seq LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.storedColumns)
                """
            ).collect().map(Self.stored).sorted { ($0.notification.receivedAt, $0.seq) < ($1.notification.receivedAt, $1.seq) }
                .map(\.notification)
            guard stored.count < limit else { return stored }
            let relayed = try await client.query(
                """
                UPDATE relayed_push SET claimed_by = \(claim), claimed_until = \(until.timeIntervalSince1970)
                WHERE seq IN (
                    SELECT seq FROM relayed_push
                    WHERE device_id = \(deviceID)
                      AND (claimed_by IS NULL OR claimed_by = \(claim) OR claimed_until < \(now.timeIntervalSince1970))
                    ORDER BY seq LIMIT \(limit - stored.count) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.storedColumns)
                """
            ).collect().map(Self.stored).sorted { $0.seq < $1.seq }.map { row in
                var notification = row.notification
                notification.relayed = true
                return notification
            }
            return stored + relayed
        }
    }

    public func releaseStoredNotifications(deviceID: String, claimant: String) async throws {
        let claim = nodeID + "/" + claimant
        try await perform { client in
            // Announced again when anything was given back: another session of the device (on another node) may be
            // the one that takes it now.
            try await client.query(
                """
                WITH relayed AS (
                    UPDATE relayed_push SET claimed_by = NULL, claimed_until = NULL
                    WHERE device_id = \(deviceID) AND claimed_by = \(claim) RETURNING 1
                ), stored AS (
                    UPDATE stored_notification SET claimed_by = NULL, claimed_until = NULL
                    WHERE device_id = \(deviceID) AND claimed_by = \(claim) RETURNING 1
                )
                SELECT pg_notify(\(Self.channel), \("stored " + deviceID))
                WHERE EXISTS (SELECT 1 FROM relayed UNION ALL SELECT 1 FROM stored)
                """)
        }
    }

    public func removeStoredNotification(token: String, topic: String, uniqueID: String) async throws {
        try await perform { client in
            try await client.query(
                """
                WITH relayed AS (DELETE FROM relayed_push WHERE unique_id = \(uniqueID))
                DELETE FROM stored_notification WHERE token = \(token) AND topic = \(topic) AND unique_id = \(uniqueID)
                """)
        }
    }

    private static let storedColumns = """
        token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload, received_at,
        expires_at, seq
        """

    private static func stored(_ row: PostgresRow) throws -> (notification: StoredNotification, seq: Int) {
        let (
            token, topic, deviceID, bundleID, apnsID, uniqueID, pushType, priority, collapseID, payload, receivedAt,
            expiresAt, seq
        ) = try row.decode(
            (String, String, String, String, String, String, String, Int, String?, Data, Double, Double, Int).self)
        return (
            StoredNotification(
                token: token, deviceID: deviceID, topic: topic, bundleID: bundleID, apnsID: apnsID, uniqueID: uniqueID,
                pushType: APNsPushType(rawValue: pushType) ?? .alert,
                priority: APNsPriority(rawValue: priority) ?? .immediate, collapseID: collapseID, payload: payload,
                receivedAt: Date(timeIntervalSince1970: receivedAt), expiresAt: Date(timeIntervalSince1970: expiresAt)),
            seq
        )
    }

    // MARK: Delivery log

    public func appendEvents(_ events: [DeliveryEvent]) async throws {
        guard !events.isEmpty else { return }
        let ids = events.map(\.uniqueID)
        let times = events.map(\.at.timeIntervalSince1970)
        let kinds = events.map(\.kind.rawValue)
        let details = events.map(\.detail)
        // '' for an event without a subject (every one but `received`): NULL in the table.
        let apnsIDs = events.map { $0.subject?.apnsID ?? "" }
        let recipients = events.map { $0.subject?.recipient ?? "" }
        let topics = events.map { $0.subject?.topic ?? "" }
        try await perform { client in
            // One statement for the batch, rows in the batch's order.
            for try await _ in try await client.execute(
                AppendEvents(
                    ids: ids, times: times, kinds: kinds, details: details, apnsIDs: apnsIDs, recipients: recipients,
                    topics: topics),
                logger: Self.statementLogger)
            {}
        }
    }

    /// A batch of delivery-log events, prepared once per connection.
    private struct AppendEvents: PostgresPreparedStatement {
        static let name = "herald_append_events_v2"
        static let sql = """
            INSERT INTO delivery_event (unique_id, at, kind, detail, apns_id, recipient, topic)
            SELECT unique_id, at, kind, detail, nullif(apns_id, ''), nullif(recipient, ''), nullif(topic, '')
            FROM unnest($1::text[], $2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                WITH ORDINALITY AS e(unique_id, at, kind, detail, apns_id, recipient, topic, n) ORDER BY n
            """
        typealias Row = Void
        var ids: [String]
        var times: [Double]
        var kinds: [String]
        var details: [String]
        var apnsIDs: [String]
        var recipients: [String]
        var topics: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(ids)
            bindings.append(times)
            bindings.append(kinds)
            bindings.append(details)
            bindings.append(apnsIDs)
            bindings.append(recipients)
            bindings.append(topics)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    public func events(uniqueID: String) async throws -> [DeliveryEvent] {
        let key = uniqueID.lowercased()
        return try await perform { client in
            try await client.query(
                "SELECT unique_id, at, kind, detail, apns_id, recipient, topic FROM delivery_event WHERE unique_id = \(key) ORDER BY id"
            ).collect().map { row in
                let (uniqueID, at, kind, detail, apnsID, recipient, topic) = try row.decode(
                    (String, Double, String, String, String?, String?, String?).self)
                return DeliveryEvent(
                    uniqueID: uniqueID, at: Date(timeIntervalSince1970: at),
                    kind: DeliveryEvent.Kind(rawValue: kind) ?? .received, detail: detail,
                    subject: apnsID.map { DeliverySubject(apnsID: $0, recipient: recipient ?? "", topic: topic ?? "") })
            }
        }
    }

    public func loggedNotifications(matching text: String, limit: Int) async throws -> [LoggedNotification] {
        let id = text.lowercased()
        return try await perform { client in
            try await client.query(
                """
                SELECT unique_id, at, apns_id, recipient, topic FROM delivery_event
                WHERE apns_id = \(id) OR recipient = \(text) OR topic = \(text) ORDER BY id DESC LIMIT \(limit)
                """
            ).collect().map { row in
                let (uniqueID, at, apnsID, recipient, topic) = try row.decode((String, Double, String?, String?, String?).self)
                return LoggedNotification(
                    uniqueID: uniqueID, receivedAt: Date(timeIntervalSince1970: at),
                    subject: DeliverySubject(apnsID: apnsID ?? "", recipient: recipient ?? "", topic: topic ?? ""))
            }
        }
    }

    public func eventCounts(since date: Date, bucket: TimeInterval) async throws -> [DeliveryCount] {
        try await perform { client in
            try await client.query(
                """
                SELECT floor(at / \(bucket))::bigint AS bucket, kind, detail, count(*) FROM delivery_event
                WHERE id >= coalesce((SELECT id FROM delivery_event WHERE at >= \(date.timeIntervalSince1970) ORDER BY id LIMIT 1),
                                     (SELECT max(id) + 1 FROM delivery_event))
                GROUP BY 1, 2, 3 ORDER BY 1
                """
            ).collect().map { row in
                let (index, kind, detail, count) = try row.decode((Int64, String, String, Int64).self)
                return DeliveryCount(
                    bucket: Date(timeIntervalSince1970: Double(index) * bucket),
                    kind: DeliveryEvent.Kind(rawValue: kind) ?? .received, detail: detail, count: Int(count))
            }
        }
    }

    public func storedNotificationCounts() async throws -> [String: Int] {
        try await perform { client in
            var counts: [String: Int] = [:]
            for try await (deviceID, count) in try await client.query(
                "SELECT device_id, count(*) FROM stored_notification GROUP BY device_id"
            ).decode((String, Int64).self) {
                counts[deviceID] = Int(count)
            }
            return counts
        }
    }

    // MARK: Console history

    public func addConsoleSend(_ record: ConsoleSendRecord, keepingSince: Date) async throws {
        try await perform { [logger] client in
            try await Self.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        """
                        INSERT INTO console_send (id, sent_at, form, status, reason, apns_id, unique_id)
                        VALUES (\(record.id), \(record.sentAt.timeIntervalSince1970), \(record.formJSON), \(record.status),
                                \(record.reason), \(record.apnsID), \(record.uniqueID))
                        """, logger: logger)
                    try await connection.query(
                        "DELETE FROM console_send WHERE sent_at < \(keepingSince.timeIntervalSince1970)", logger: logger)
                }
            }
        }
    }

    public func consoleSends(since date: Date, limit: Int) async throws -> [ConsoleSendRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT id, sent_at, form, status, reason, apns_id, unique_id FROM console_send
                WHERE sent_at >= \(date.timeIntervalSince1970) ORDER BY sent_at DESC, id DESC LIMIT \(limit)
                """
            ).collect().map(Self.consoleSend)
        }
    }

    public func consoleSend(id: String) async throws -> ConsoleSendRecord? {
        try await perform { client in
            try await client.query(
                "SELECT id, sent_at, form, status, reason, apns_id, unique_id FROM console_send WHERE id = \(id)"
            ).collect().first.map(Self.consoleSend)
        }
    }

    private static func consoleSend(_ row: PostgresRow) throws -> ConsoleSendRecord {
        let (id, sentAt, form, status, reason, apnsID, uniqueID) = try row.decode(
            (String, Double, String, Int, String?, String?, String?).self)
        return ConsoleSendRecord(
            id: id, sentAt: Date(timeIntervalSince1970: sentAt), form: ConsoleSendRecord.form(json: form), status: status,
            reason: reason, apnsID: apnsID, uniqueID: uniqueID)
    }

    public func pruneEvents(before date: Date) async throws {
        try await perform { client in
            try await client.query(
                """
                DELETE FROM delivery_event WHERE id < coalesce(
                    (SELECT id FROM delivery_event WHERE at >= \(date.timeIntervalSince1970) ORDER BY id LIMIT 1),
                    (SELECT max(id) + 1 FROM delivery_event))
                """)
        }
    }
}
