import Foundation
import GRDB
import HeraldStorage
import Testing

/// Statements whose values go straight to SQLite (`executeDirectly`, `fetchFirstDirectly`): what GRDB's arguments
/// would store, read back the same, with GRDB's errors.
@Suite struct DirectBindingsTests {
    private static func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE row (id TEXT PRIMARY KEY, note TEXT, count INTEGER, at REAL, bytes BLOB)")
        }
        return queue
    }

    @Test("Text, NULL, integers, reals and blobs (an empty one too) are stored as GRDB would store them")
    func roundTrip() throws {
        let queue = try Self.database()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO row VALUES (?, ?, ?, ?, ?)")
            try insert.executeDirectly {
                $0.bind("é-1")
                $0.bind(nil as String?)
                $0.bind(42)
                $0.bind(1.5)
                $0.bind(Data([0, 1, 2]))
            }
            // The same statement again, with other values: it was reset and its bindings cleared.
            try insert.executeDirectly {
                $0.bind("two")
                $0.bind("a note")
                $0.bind(-7)
                $0.bind(0.25)
                $0.bind(Data())
            }
        }
        try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM row ORDER BY rowid")
            #expect(rows.count == 2)
            let first: (id: String, note: String?, count: Int, at: Double, bytes: Data) = (
                rows[0]["id"], rows[0]["note"], rows[0]["count"], rows[0]["at"], rows[0]["bytes"]
            )
            #expect(first.id == "é-1" && first.note == nil && first.count == 42)
            #expect(first.at == 1.5 && first.bytes == Data([0, 1, 2]))
            let second: (note: String?, count: Int, at: Double) = (rows[1]["note"], rows[1]["count"], rows[1]["at"])
            #expect(second.note == "a note" && second.count == -7 && second.at == 0.25)
            // An empty blob is a blob, not NULL, as with GRDB's arguments.
            #expect(try String.fetchOne(db, sql: "SELECT typeof(bytes) FROM row WHERE id = 'two'") == "blob")
            let select = try db.cachedStatement(sql: "SELECT id, note, count, at FROM row WHERE id = ?")
            let direct = try #require(
                try select.fetchFirstDirectly({ $0.bind("é-1") }) {
                    (id: $0.text(0), note: $0.text(1), count: $0.integer(2), at: $0.double(3))
                })
            #expect(direct.id == "é-1" && direct.note == nil)
            #expect(direct.count == 42 && direct.at == 1.5)
            #expect(try select.fetchFirstDirectly({ $0.bind("nobody") }) { $0.text(0) } == nil)
        }
    }

    @Test("A constraint failure is GRDB's DatabaseError, and the statement works again afterwards")
    func errors() throws {
        let queue = try Self.database()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO row (id) VALUES (?)")
            try insert.executeDirectly { $0.bind("same") }
            let error = #expect(throws: DatabaseError.self) { try insert.executeDirectly { $0.bind("same") } }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.sql == "INSERT INTO row (id) VALUES (?)")
            try insert.executeDirectly { $0.bind("other") }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM row") == 2)
        }
    }
}
