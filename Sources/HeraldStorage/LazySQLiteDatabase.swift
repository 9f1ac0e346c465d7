import Foundation
import GRDB
import Logging

/// One of a store owner's SQLite databases, opened (and migrated) the first time it is used: an owner that may never
/// need its file (a device whose apps never use the feature) creates none.
package struct LazySQLiteDatabase: Sendable {
    private let url: URL?
    private let migrator: DatabaseMigrator
    private let logger: Logger
    private var opened: SQLiteDatabase?

    /// The database at `url` (in memory when `nil`), with its schema's migrations.
    package init(url: URL?, migrator: DatabaseMigrator, logger: Logger) {
        self.url = url
        self.migrator = migrator
        self.logger = logger
    }

    /// The database, opened the first time.
    ///
    /// - Throws: As ``SQLiteDatabase/open(_:migrator:logger:)``; a later call tries again.
    package mutating func open() throws -> SQLiteDatabase {
        if let opened { return opened }
        let database = try SQLiteDatabase.open(url, migrator: migrator, logger: logger)
        opened = database
        return database
    }
}
