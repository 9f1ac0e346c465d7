import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A gateway node's place among the others on one PostgreSQL database, run as a `Service`: it listens for the other
/// nodes' announcements (LISTEN/NOTIFY) and keeps this node's heartbeat in `gateway_node`, releasing the claims of
/// nodes whose heartbeat stopped; at graceful shutdown it takes this node out of the registry and gives back its
/// claims.
///
/// It uses its store's pool (the store runs the pool and the coordinator in one service group, the coordinator
/// stopping first) and a connection of its own for LISTEN.
final class PostgresNodeCoordinator: Service {
    /// The channel nodes announce on: `stored <device ID> …` when notifications were stored for devices (sent in the
    /// storing commit), `connected <device ID> <node ID> <seconds since 1970>` when a device connected to a node,
    /// `broadcast <channel ID> <unique ID> <node ID>` when a node published a broadcast, `logged <node ID>` when a node
    /// wrote to the delivery log (after its commits, at most once per ``logAnnouncementInterval``).
    static let channel = "herald_gateway"
    /// The shortest time between two of this node's `logged` announcements: writes meanwhile are announced together.
    static let logAnnouncementInterval: Duration = .milliseconds(10)

    let nodeID: String
    let url: PostgresDatabaseURL
    let configuration: PostgresGatewayStore.Configuration
    let client: PostgresClient
    let logger: Logger
    /// This node's writes to the delivery log (announced), and every change to it (what the others' announcements
    /// signal).
    let logWrites: (local: ChangeSignal, all: ChangeSignal)
    /// What the other nodes announced, until the coordinator stops.
    let events: AsyncStream<GatewayNodeEvent>
    private let eventContinuation: AsyncStream<GatewayNodeEvent>.Continuation
    /// Whether the listener has begun once, and who waits for it.
    private let listeners = Mutex<(listening: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// The coordinator of node `nodeID` on the database at `url`, through `client` (which its store runs).
    ///
    /// - Parameters:
    ///   - nodeID: This node's ID in `gateway_node`.
    ///   - url: The database (for the listening connection).
    ///   - configuration: The heartbeat's interval, the node timeout, the reconnect delay.
    ///   - client: The store's pool.
    ///   - logger: Where lost connections and dead nodes are reported.
    ///   - logWrites: This node's writes to the delivery log, and the signal of every change to it.
    init(
        nodeID: String, url: PostgresDatabaseURL, configuration: PostgresGatewayStore.Configuration, client: PostgresClient,
        logger: Logger, logWrites: (local: ChangeSignal, all: ChangeSignal)
    ) {
        self.nodeID = nodeID
        self.url = url
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.logWrites = logWrites
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4_096))
    }

    /// Listens and beats until graceful shutdown (or cancellation); then leaves the registry, releasing this node's
    /// claims, and ends ``events``.
    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.listen() }
            group.addTask { await self.keepHeartbeat() }
            group.addTask { await self.announceLogWrites() }
            try? await gracefulShutdown()
            try? await PostgresGatewayStore.perform(client: client, configuration: configuration) { client in
                try await Self.forget(node: self.nodeID, client: client)
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
                logger.warning(
                    "Lost the PostgreSQL listener; connecting again",
                    metadata: ["error": "\(PostgresGatewayStore.describe(error))"])
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
                try await PostgresGatewayStore.perform(client: client, configuration: configuration) { client in
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
                logger.warning(
                    "Could not write this node's heartbeat", metadata: ["error": "\(PostgresGatewayStore.describe(error))"])
            }
            try? await Task.sleep(for: configuration.heartbeatInterval)
        }
    }

    /// Announces this node's writes to the delivery log to the others, after its commits (a NOTIFY of its own, never in
    /// a delivery's transaction), at most once per ``logAnnouncementInterval``, until the task is cancelled.
    func announceLogWrites() async {
        let payload = "logged " + nodeID
        var seen = logWrites.local.generation
        while !Task.isCancelled {
            await logWrites.local.wait(after: seen, timeout: .seconds(3_600))
            guard !Task.isCancelled else { return }
            guard logWrites.local.generation != seen else { continue }
            seen = logWrites.local.generation
            do {
                try await PostgresGatewayStore.perform(client: client, configuration: configuration) { client in
                    _ = try await client.query("SELECT pg_notify(\(Self.channel), \(payload))").collect()
                }
            } catch {
                logger.warning(
                    "Could not tell the other nodes of delivery-log writes; their waits answer at their timeout",
                    metadata: ["error": "\(PostgresGatewayStore.describe(error))"])
            }
            try? await Task.sleep(for: Self.logAnnouncementInterval)
        }
    }

    /// The events an announcement stands for; none for this node's own connections and for what it cannot read. A
    /// `logged` announcement of another node signals the delivery log's changes at once.
    func events(_ payload: String) -> [GatewayNodeEvent] {
        let parts = payload.split(separator: " ").map(String.init)
        switch parts.first {
        case "logged" where parts.count == 2 && parts[1] != nodeID:
            logWrites.all.changed()
            return []
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
}
