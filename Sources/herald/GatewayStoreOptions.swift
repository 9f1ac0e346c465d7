import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldGateway
import Logging
import ServiceLifecycle

/// Where the gateway's store is: the data directory's SQLite file, or a PostgreSQL database (`--database`) that
/// several gateway nodes share. Every command that reads or writes the gateway's store takes these options.
struct GatewayStoreOptions: ParsableArguments {
    @OptionGroup var data: DataDirectoryOptions
    @Option(
        help: ArgumentHelp(
            "The gateway's store on PostgreSQL, shared by several gateway nodes (default: $HERALD_DATABASE, else <data-dir>/gateway.sqlite).",
            valueName: "postgres://USER@HOST:PORT/DB"))
    var database: String?

    /// The data directory.
    var directory: HeraldDataDirectory { data.directory }

    /// The PostgreSQL database, if one is chosen (`--database`, else `$HERALD_DATABASE`).
    func databaseURL() throws -> PostgresDatabaseURL? {
        guard let text = database ?? ProcessInfo.processInfo.environment["HERALD_DATABASE"], !text.isEmpty else { return nil }
        do {
            return try PostgresDatabaseURL(text)
        } catch let error as PostgresDatabaseURL.Invalid {
            throw ValidationError(error.description)
        }
    }

    /// Opens the store for a gateway node: SQLite, or PostgreSQL connected and migrated (a `Service` to run with the
    /// gateway). An unreachable database, or one of a newer schema, is a one-line error.
    ///
    /// - Parameter logger: Where the store logs.
    func openForNode(logger: Logger) async throws -> any GatewayStore & ConsoleGateway {
        guard let url = try databaseURL() else { return try openGatewayStore(data, logger: logger) }
        return try await openPostgres(url, isNode: true, logger: logger)
    }

    /// Runs `body` with the store, as a command that reads or writes it (not a gateway node).
    @discardableResult
    func withStore<T>(
        logger: Logger = Logger(label: "herald.gateway.store"), _ body: (any GatewayStore) async throws -> T
    ) async throws -> T {
        guard let url = try databaseURL() else { return try await body(try openGatewayStore(data, logger: logger)) }
        let store = try await openPostgres(url, isNode: false, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await store.run() }
            defer { group.cancelAll() }
            return try await body(store)
        }
    }

    /// Runs `body` with the store, as a command that reads it or removes from it: with no data directory there is
    /// nothing to read, so it names the missing directory instead of making one (a mistyped `--data-dir`).
    @discardableResult
    func withExistingStore<T>(
        logger: Logger = Logger(label: "herald.gateway.store"), _ body: (any GatewayStore) async throws -> T
    ) async throws -> T {
        if try databaseURL() == nil { try data.requireExisting() }
        return try await withStore(logger: logger, body)
    }

    /// Runs `body` with the console's store, as a command that reads or writes it: beside the gateway's (its SQLite
    /// file in the data directory, or its tables in the same PostgreSQL database).
    @discardableResult
    func withConsoleStore<T>(
        existing: Bool = false, logger: Logger = Logger(label: "herald.console.store"),
        _ body: (any ConsoleStore) async throws -> T
    ) async throws -> T {
        if existing, try databaseURL() == nil { try data.requireExisting() }
        return try await withStore(logger: logger) { gatewayStore in
            try await body(try openConsoleStore(beside: gatewayStore, in: directory, logger: logger))
        }
    }

    private func openPostgres(_ url: PostgresDatabaseURL, isNode: Bool, logger: Logger) async throws -> PostgresGatewayStore {
        var configuration = PostgresGatewayStore.Configuration()
        configuration.isNode = isNode
        var storeLogger = logger
        // A command's store lives for one request: the pool's notes (a lease asked for before its first connection)
        // are noise there; errors still reach the command as thrown errors.
        storeLogger.logLevel = isNode ? max(logger.logLevel, .notice) : .critical
        let store = try PostgresGatewayStore(url: url, configuration: configuration, logger: storeLogger)
        do {
            try await store.prepare()
        } catch let error as GatewayStoreError {
            throw CommandFailure(error.description)
        }
        return store
    }
}

/// Opens the console's store beside the gateway's: its tables in the same PostgreSQL database (over the gateway
/// store's pool, which must be running by its first call), else `console.sqlite` in the data directory — copying, once, what a
/// `gateway.sqlite` made before 2026-12 kept for the console. A file that cannot be opened is a one-line error.
///
/// - Parameters:
///   - gatewayStore: The gateway's store, opened.
///   - directory: The data directory.
///   - logger: Where the store logs.
func openConsoleStore(
    beside gatewayStore: any GatewayStore, in directory: HeraldDataDirectory, logger: Logger
) throws -> any ConsoleStore {
    // Its schema is brought up to date by its first call, once the pool runs (a node's pool runs in its service group).
    if let shared = gatewayStore as? PostgresGatewayStore { return PostgresConsoleStore(sharingPoolOf: shared, logger: logger) }
    do {
        try directory.create()
        try ValidationError.requireWritable(directory.consoleDatabase)
        return try SQLiteConsoleStore(url: directory.consoleDatabase, importingFrom: directory.gatewayDatabase, logger: logger)
    } catch {
        throw ValidationError.cannotOpen(directory.consoleDatabase, error)
    }
}
