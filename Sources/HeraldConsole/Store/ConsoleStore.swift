import Foundation

/// What the web console keeps of its own: operator tokens (by SHA-256) and the notifications it sent — in its own
/// store, beside the gateway's: `console.sqlite` in the data directory (``SQLiteConsoleStore``), or its own tables in
/// the gateway nodes' PostgreSQL database (``PostgresConsoleStore``).
///
/// A write that returned is durable.
public protocol ConsoleStore: Sendable {
    /// Keeps a new console operator token (its SHA-256).
    func addOperatorToken(_ token: OperatorTokenRecord) async throws
    /// The operator token with this SHA-256, revoked or not.
    func operatorToken(hash: String) async throws -> OperatorTokenRecord?
    /// Revokes the operator token with this SHA-256, or every one when `nil`; returns how many were revoked.
    func revokeOperatorTokens(hash: String?, at: Date) async throws -> Int

    /// Keeps a notification the console sent, and forgets those sent before `keepingSince`.
    func addConsoleSend(_ record: ConsoleSendRecord, keepingSince: Date) async throws
    /// What the console sent since `date`, newest first, at most `limit`.
    func consoleSends(since date: Date, limit: Int) async throws -> [ConsoleSendRecord]
    /// The console's send with this ID.
    func consoleSend(id: String) async throws -> ConsoleSendRecord?
}
