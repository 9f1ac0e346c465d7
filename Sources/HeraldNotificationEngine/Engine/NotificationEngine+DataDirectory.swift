import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Logging

extension NotificationEngine {
    /// An engine on the SQLite database and attachment store of a user's data directory.
    ///
    /// - Parameters:
    ///   - directory: The data directory; created if missing.
    ///   - presenter: Where delivered notifications are shown.
    ///   - scope: The apps to schedule for; `nil` for every app (the device's view).
    ///   - clock: The clock; the real one by default.
    ///   - authorizationAnswer: What the person answers an app's authorization request (no one is asked).
    ///   - contentExtensions: Apps' content extensions, consulted when presenting and for actions.
    ///   - logger: Where the engine logs.
    /// - Throws: When the directory or the database cannot be created or opened.
    package static func forDataDirectory(
        _ directory: HeraldDataDirectory, presenter: any NotificationPresenter, scope: [String]?,
        clock: any HeraldClock = SystemClock(), authorizationAnswer: AuthorizationAnswer = .allow,
        contentExtensions: (any ContentExtensions)? = nil, logger: Logger
    ) throws -> NotificationEngine {
        try directory.create()
        let store = try SQLiteNotificationStore(url: directory.notificationDatabase, logger: logger)
        var configuration = Configuration(
            clock: clock, timeZone: .current, presenter: presenter,
            attachmentDirectory: directory.attachmentStore, logger: logger, scope: scope
        )
        configuration.authorizationAnswer = authorizationAnswer
        configuration.contentExtensions = contentExtensions
        return NotificationEngine(store: store, configuration: configuration)
    }
}
