import Foundation
import GRDB
import GatewayTestSupport
import HeraldConsole
import HeraldGatewayStore
import HeraldTestSupport
import HeraldTesting
import PostgresNIO
import PostgresTesting
import Testing

/// The console's store: its own records, on both back ends, apart from the gateway's store (issue 65).
@Suite(.heavy, .timeLimit(.minutes(3))) struct ConsoleStoreContractTests {
    static let day0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs `body` with a fresh console store of `backEnd`: `console.sqlite` in a folder of its own, or the console's
    /// tables in a fresh PostgreSQL database over a gateway store's pool.
    func withConsoleStore(_ backEnd: StoreBackEnd, _ body: @Sendable (any ConsoleStore) async throws -> Void) async throws {
        switch backEnd {
        case .sqlite:
            let folder = try ScratchFolder.make("herald-console-store")
            defer { try? FileManager.default.removeItem(at: folder) }
            try await body(try SQLiteConsoleStore(url: folder.appendingPathComponent("console.sqlite")))
        case .postgres:
            let url = try await PostgresServer.shared.makeDatabase()
            try await withPostgresStores(url, count: 1) { try await body(PostgresConsoleStore(sharingPoolOf: $0[0])) }
        }
    }

    @Test(
        "Console operator tokens: kept by hash, revoked one by one or all at once, the first revocation's time kept",
        arguments: StoreBackEnd.allCases)
    func operatorTokens(_ backEnd: StoreBackEnd) async throws {
        try await withConsoleStore(backEnd) { store in
            let first = OperatorTokenRecord(hash: String(repeating: "a", count: 64), createdAt: Self.day0)
            let second = OperatorTokenRecord(hash: String(repeating: "b", count: 64), createdAt: Self.day0 + 1)
            try await store.addOperatorToken(first)
            try await store.addOperatorToken(second)
            #expect(try await store.operatorToken(hash: first.hash) == first)
            #expect(try await store.operatorToken(hash: String(repeating: "c", count: 64)) == nil)
            let one = try await store.revokeOperatorTokens(hash: first.hash, at: Self.day0 + 10)
            #expect(one == 1)
            #expect(try await store.operatorToken(hash: first.hash)?.revokedAt == Self.day0 + 10)
            let rest = try await store.revokeOperatorTokens(hash: nil, at: Self.day0 + 20)
            #expect(rest == 1)
            #expect(try await store.operatorToken(hash: first.hash)?.revokedAt == Self.day0 + 10)
            #expect(try await store.operatorToken(hash: second.hash)?.revokedAt == Self.day0 + 20)
        }
    }

    static func record(_ id: String, at seconds: Double, status: Int) -> ConsoleSendRecord {
        ConsoleSendRecord(
            id: id, sentAt: day0 + seconds,
            form: ["payload": #"{"aps":{"alert":"<b>hi</b>"}}"#, "topic": "com.example.app"],
            status: status, reason: status == 200 ? nil : "BadDeviceToken", apnsID: status == 200 ? "a-\(id)" : nil,
            uniqueID: status == 200 ? "u-\(id)" : nil)
    }

    @Test("The console's history: what it sent, newest first, with the answer; kept 30 days", arguments: StoreBackEnd.allCases)
    func consoleHistory(_ backEnd: StoreBackEnd) async throws {
        try await withConsoleStore(backEnd) { store in
            let record = Self.record
            try await store.addConsoleSend(record("1", 0, 200), keepingSince: Self.day0 - ConsoleSendRecord.kept)
            try await store.addConsoleSend(record("2", 10, 400), keepingSince: Self.day0 - ConsoleSendRecord.kept)
            #expect(try await store.consoleSends(since: Self.day0 - 1, limit: 10) == [record("2", 10, 400), record("1", 0, 200)])
            #expect(try await store.consoleSends(since: Self.day0 + 5, limit: 10).map(\.id) == ["2"])
            #expect(try await store.consoleSend(id: "1") == record("1", 0, 200))
            #expect(try await store.consoleSend(id: "9") == nil)
            // Thirty days on, a new send forgets what is older than thirty days.
            let later = Self.day0 + ConsoleSendRecord.kept + 5
            try await store.addConsoleSend(
                record("3", ConsoleSendRecord.kept + 5, 200), keepingSince: later - ConsoleSendRecord.kept)
            #expect(try await store.consoleSends(since: .distantPast, limit: 10).map(\.id) == ["3", "2"])
        }
    }

    @Test("The gateway's store keeps none of the console's tables: a new gateway.sqlite has neither")
    func notInTheGatewayStore() async throws {
        let folder = try ScratchFolder.make("herald-console-store")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("gateway.sqlite")
        _ = try SQLiteGatewayStore(url: file)
        let tables = try await DatabaseQueue(path: file.path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        #expect(tables.contains("device_token"))
        #expect(!tables.contains("operator_token") && !tables.contains("console_send"), "\(tables)")
    }

    @Test(
        "A gateway.sqlite made before the console had its own store: its operator tokens and history are copied into console.sqlite once, revocations kept, the gateway file left as it was"
    )
    func copiedFromAnOldGatewayFile() async throws {
        let folder = try ScratchFolder.make("herald-console-store")
        defer { try? FileManager.default.removeItem(at: folder) }
        let gatewayFile = folder.appendingPathComponent("gateway.sqlite")
        // The two tables as the gateway's migrations v6 and v7 made them until 2026-12, with rows.
        let old = try DatabaseQueue(path: gatewayFile.path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE operator_token (hash TEXT PRIMARY KEY, created_at REAL NOT NULL, revoked_at REAL);
                    CREATE TABLE console_send (
                        id TEXT PRIMARY KEY, sent_at REAL NOT NULL, form TEXT NOT NULL, status INTEGER NOT NULL,
                        reason TEXT, apns_id TEXT, unique_id TEXT);
                    INSERT INTO operator_token VALUES ('\(String(repeating: "a", count: 64))', 1800000000, NULL);
                    INSERT INTO operator_token VALUES ('\(String(repeating: "b", count: 64))', 1800000001, 1800000005);
                    INSERT INTO console_send VALUES ('1', 1800000000, '{"topic":"com.example.app"}', 200, NULL, 'a-1', 'u-1');
                    """)
        }
        try old.close()
        let consoleFile = folder.appendingPathComponent("console.sqlite")
        let store = try SQLiteConsoleStore(url: consoleFile, importingFrom: gatewayFile)
        #expect(
            try await store.operatorToken(hash: String(repeating: "a", count: 64))
                == OperatorTokenRecord(hash: String(repeating: "a", count: 64), createdAt: Self.day0))
        #expect(try await store.operatorToken(hash: String(repeating: "b", count: 64))?.revokedAt == Self.day0 + 5)
        #expect(
            try await store.consoleSend(id: "1")
                == ConsoleSendRecord(
                    id: "1", sentAt: Self.day0, form: ["topic": "com.example.app"], status: 200, reason: nil, apnsID: "a-1",
                    uniqueID: "u-1"))
        // Once: a row added to the old file later is not copied when the console's store opens again.
        let again = try DatabaseQueue(path: gatewayFile.path)
        try await again.write { db in
            try db.execute(sql: "INSERT INTO operator_token VALUES ('\(String(repeating: "c", count: 64))', 1800000009, NULL)")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM operator_token") == 3)
        }
        try again.close()
        let reopened = try SQLiteConsoleStore(url: consoleFile, importingFrom: gatewayFile)
        #expect(try await reopened.operatorToken(hash: String(repeating: "c", count: 64)) == nil)
        #expect(try await reopened.operatorToken(hash: String(repeating: "a", count: 64)) != nil)
    }

    @Test(
        "A PostgreSQL database whose gateway schema made the console's tables before the move: the console's store keeps them, rows and all; a new database gets them from the console's store alone"
    )
    func adoptedOnPostgres() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 1) { stores in
            let gateway = stores[0]
            // The gateway's schema alone: no console tables.
            let before = try await gateway.perform { client in
                try await client.query(
                    "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('operator_token', 'console_send')"
                ).collect().first?.decode(Int.self)
            }
            #expect(before == 0)
            // As the gateway's migration 4 made the table until 2026-12, with a row.
            try await gateway.perform { client in
                try await client.query(
                    "CREATE TABLE operator_token (hash text PRIMARY KEY, created_at double precision NOT NULL, revoked_at double precision)"
                )
                try await client.query(
                    "INSERT INTO operator_token (hash, created_at) VALUES (\(String(repeating: "a", count: 64)), 1800000000)")
            }
            let store = PostgresConsoleStore(sharingPoolOf: gateway)
            #expect(
                try await store.operatorToken(hash: String(repeating: "a", count: 64))
                    == OperatorTokenRecord(hash: String(repeating: "a", count: 64), createdAt: Self.day0))
            try await store.addConsoleSend(Self.record("1", at: 0, status: 200), keepingSince: .distantPast)
            #expect(try await store.consoleSend(id: "1") == Self.record("1", at: 0, status: 200))
        }
    }
}
