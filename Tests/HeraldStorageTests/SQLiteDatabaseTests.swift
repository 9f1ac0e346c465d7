import Foundation
import GRDB
import HeraldStorage
import Logging
import Synchronization
import Testing

/// Opening one database file from several processes at once.
@Suite(.timeLimit(.minutes(1))) struct SQLiteDatabaseTests {
    /// A schema of several migrations, each making a table (a second run of one fails: `table … already exists`).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for version in 1...6 {
            migrator.registerMigration("v\(version)") { db in
                try db.execute(sql: "CREATE TABLE t\(version) (id INTEGER PRIMARY KEY, value TEXT)")
                try db.execute(sql: "INSERT INTO t\(version) (value) VALUES ('made')")
            }
        }
        return migrator
    }

    @Test(
        "Several openers of a new file migrate it at the same moment (an app and the device daemon starting together): each opens it, every migration applied once"
    )
    func concurrentMigrations() async throws {
        for round in 0..<5 {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-migrate-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("store.sqlite")
            let openers = 6
            let failures = Mutex<[String]>([])
            // Threads of their own, started together: opening is blocking work and must not hold the test's pool.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let remaining = Mutex(openers)
                let start = Mutex(false)
                for _ in 0..<openers {
                    Thread {
                        while !start.withLock({ $0 }) { sched_yield() }
                        do {
                            _ = try SQLiteDatabase(url: url, migrator: Self.migrator, logger: Logger(label: "test"))
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                        if remaining.withLock({
                            $0 -= 1; return $0
                        }) == 0 {
                            done.resume()
                        }
                    }.start()
                }
                start.withLock { $0 = true }
            }
            #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
            let database = try SQLiteDatabase(url: url, migrator: Self.migrator, logger: Logger(label: "test"))
            for version in 1...6 {
                let rows = try await database.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t\(version)") }
                #expect(rows == 1, "t\(version) made once")
            }
        }
    }
}
