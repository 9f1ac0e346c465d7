import ArgumentParser
import Foundation

extension ValidationError {
    /// A database that cannot be opened, with what to do: a read-only data directory (a read-only mount, or one
    /// this user may not write) is named as such.
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - error: Why it could not be opened.
    static func cannotOpen(_ database: URL, _ error: any Error) -> ValidationError {
        readOnly(database) ?? ValidationError("Cannot open \(database.path): \(error). Pass a writable --data-dir.")
    }

    /// Throws when `database`'s folder cannot be written: checked before opening, since SQLite opens a database on a
    /// read-only disk when its WAL files are there, and only its first write would fail.
    static func requireWritable(_ database: URL) throws {
        if let error = readOnly(database) { throw error }
    }

    /// The error for a database whose folder is read-only (a read-only mount, or one this user may not write).
    private static func readOnly(_ database: URL) -> ValidationError? {
        let folder = database.deletingLastPathComponent().path
        guard access(folder, W_OK) != 0, errno == EROFS || errno == EACCES else { return nil }
        let why = errno == EROFS ? "is on a read-only file system" : "is not writable by this user"
        return ValidationError(
            "Cannot open \(database.path): the data directory \(folder) \(why) (read-only). Pass a writable "
                + "--data-dir, or make this one writable (e.g. remount it read-write).")
    }
}
