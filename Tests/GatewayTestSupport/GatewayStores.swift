import Foundation
import HeraldGatewayStore
import HeraldTesting
import Logging
import PostgresTesting
import ServiceLifecycle
import Testing

/// The gateway store's promises, checked on both back ends: SQLite (one node) and PostgreSQL (several).
public enum StoreBackEnd: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    public var testDescription: String { rawValue }
}

/// PostgreSQL stores as the tests make them: a loaded machine (the whole suite beside busy loops) can take longer than
/// the 5 s a node allows itself to reach its database, so the tests allow 30 (those about a database that goes away
/// set their own).
public let testStoreConfiguration: PostgresGatewayStore.Configuration = {
    var configuration = PostgresGatewayStore.Configuration()
    configuration.operationTimeout = .seconds(30)
    return configuration
}()

/// Runs `body` with a fresh, empty store of `backEnd` (a PostgreSQL store running as its service meanwhile).
public func withStore<T: Sendable>(
    _ backEnd: StoreBackEnd, configuration: PostgresGatewayStore.Configuration = testStoreConfiguration,
    _ body: @Sendable (any GatewayStore) async throws -> T
) async throws -> T {
    switch backEnd {
    case .sqlite:
        let folder = try ScratchFolder.make("herald-store")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(try SQLiteGatewayStore(url: folder.appendingPathComponent("gateway.sqlite")))
    case .postgres:
        let url = try await PostgresServer.shared.makeDatabase()
        return try await withPostgresStores(url, count: 1, configuration: configuration) { try await body($0[0]) }
    }
}

/// Runs `body` with `count` PostgreSQL stores on one database (as `count` gateway nodes have), each running.
public func withPostgresStores<T: Sendable>(
    _ url: PostgresDatabaseURL, count: Int, configuration: PostgresGatewayStore.Configuration = testStoreConfiguration,
    _ body: @Sendable ([PostgresGatewayStore]) async throws -> T
) async throws -> T {
    var logger = Logger(label: "test.postgres-store")
    logger.logLevel = .error
    let stores = try (0..<count).map { _ in try PostgresGatewayStore(url: url, configuration: configuration, logger: logger) }
    for store in stores { try await store.prepare() }
    // As a node runs it: in a service group, stopped gracefully (the node says goodbye).
    let group = ServiceGroup(services: stores, gracefulShutdownSignals: [], logger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { tasks in
        tasks.addTask {
            try await group.run(); return nil
        }
        defer { tasks.cancelAll() }
        let result: Result<T, any Error>
        do { result = .success(try await body(stores)) } catch { result = .failure(error) }
        await group.triggerGracefulShutdown()
        while let _ = try await tasks.next() {}
        return try result.get()
    }
}
