import Foundation
import GRDB
import GRDBSQLite

/// The values of a statement's parameters, bound one after the other straight into SQLite — no
/// `StatementArguments` array, no boxed values: what a hot path's statement needs and nothing else.
package struct DirectBindings: ~Copyable {
    private let statement: SQLiteStatement
    private var index: CInt = 1
    private(set) var failure: CInt = SQLITE_OK

    fileprivate init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    /// Binds the next parameter to `text`, or to NULL.
    package mutating func bind(_ text: String?) {
        guard var text else { return bindNull() }
        let code = text.withUTF8 { bytes in
            // SQLite copies the bytes (SQLITE_TRANSIENT): the string's storage need not outlive the call.
            sqlite3_bind_text(statement, index, bytes.baseAddress, CInt(bytes.count), Self.transient)
        }
        advance(code)
    }

    /// Binds the next parameter to `number`.
    package mutating func bind(_ number: Int) {
        advance(sqlite3_bind_int64(statement, index, sqlite3_int64(number)))
    }

    /// Binds the next parameter to `number`.
    /// Binds the next parameter to `number`, or to NULL.
    package mutating func bind(_ number: Int?) {
        guard let number else { return bindNull() }
        bind(number)
    }

    package mutating func bind(_ number: Double) {
        advance(sqlite3_bind_double(statement, index, number))
    }

    /// Binds the next parameter to `data` as a blob (an empty blob, not NULL, when `data` is empty).
    package mutating func bind(_ data: Data) {
        let code = data.withUnsafeBytes { bytes in
            sqlite3_bind_blob(statement, index, bytes.baseAddress ?? Self.emptyBlob, CInt(bytes.count), Self.transient)
        }
        advance(code)
    }

    private mutating func bindNull() {
        advance(sqlite3_bind_null(statement, index))
    }

    private mutating func advance(_ code: CInt) {
        if code != SQLITE_OK && failure == SQLITE_OK { failure = code }
        index += 1
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    nonisolated(unsafe) private static let emptyBlob = UnsafeRawPointer(bitPattern: 1)!
}

/// The current row of a statement stepped by ``GRDB/Statement/fetchFirstDirectly(_:_:)``, its columns read by index.
package struct DirectRow: ~Copyable {
    private let statement: SQLiteStatement

    fileprivate init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    /// Column `column` as text, `nil` when NULL.
    package func text(_ column: CInt) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `column` as a number, `nil` when NULL.
    package func double(_ column: CInt) -> Double? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_double(statement, column)
    }

    /// Column `column` as an integer, `nil` when NULL.
    package func integer(_ column: CInt) -> Int? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(statement, column))
    }
}

extension Statement {
    /// Runs the statement with its parameters bound by `bind`, straight into SQLite, and steps it to its end.
    ///
    /// For statements on a hot path that nothing observes: it skips GRDB's arguments, validation and observation
    /// (Herald registers no transaction observers). Errors are GRDB's `DatabaseError`, as `execute(arguments:)` throws.
    ///
    /// - Parameter bind: Binds every parameter, in order.
    package func executeDirectly(_ bind: (inout DirectBindings) -> Void) throws {
        try run(bind) { statement in
            var code = sqlite3_step(statement)
            while code == SQLITE_ROW { code = sqlite3_step(statement) }
            return (code, ())
        }
    }

    /// Runs the statement with its parameters bound by `bind` and reads its first row with `read` (`nil`: no row).
    ///
    /// - Parameters:
    ///   - bind: Binds every parameter, in order.
    ///   - read: Makes a value of the first row; its columns are valid only inside.
    package func fetchFirstDirectly<T>(
        _ bind: (inout DirectBindings) -> Void, _ read: (borrowing DirectRow) throws -> T
    ) throws -> T? {
        try run(bind) { statement in
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else { return (code, nil) }
            return (SQLITE_DONE, try read(DirectRow(statement)))
        }
    }

    private func run<T>(
        _ bind: (inout DirectBindings) -> Void, _ step: (SQLiteStatement) throws -> (CInt, T)
    ) throws -> T {
        let statement = sqliteStatement
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        sqlite3_reset(statement)
        var bindings = DirectBindings(statement)
        bind(&bindings)
        if bindings.failure != SQLITE_OK { throw error(bindings.failure) }
        let (code, value) = try step(statement)
        guard code == SQLITE_DONE else { throw error(code) }
        return value
    }

    private func error(_ code: CInt) -> DatabaseError {
        let connection = sqlite3_db_handle(sqliteStatement)
        return DatabaseError(
            resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) },
            sql: sql)
    }
}
