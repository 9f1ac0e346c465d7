import Foundation
import HeraldCore
import Logging

extension NotificationEngine {
    /// An engine on the SQLite database and attachment store of a user's data directory.
    ///
    /// - Parameters:
    ///   - directory: The data directory; created if missing.
    ///   - presenter: Where delivered notifications are shown.
    ///   - scope: The apps to schedule for; `nil` for every app (the device's view).
    ///   - clock: The clock; the real one by default.
    ///   - logger: Where the engine logs.
    /// - Throws: When the directory or the database cannot be created or opened.
    package static func forDataDirectory(
        _ directory: HeraldDataDirectory, presenter: any NotificationPresenter, scope: [String]?,
        clock: any HeraldClock = SystemClock(), logger: Logger
    ) throws -> NotificationEngine {
        try directory.create()
        let store = try SQLiteNotificationStore(url: directory.notificationDatabase, logger: logger)
        let configuration = Configuration(
            clock: clock, timeZone: .current, presenter: presenter,
            attachmentDirectory: directory.attachmentStore, logger: logger, scope: scope
        )
        return NotificationEngine(store: store, configuration: configuration)
    }
}
