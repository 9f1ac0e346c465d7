import ArgumentParser
import Foundation
import HeraldCore
import Logging
import ServiceLifecycle
import UnixSignals
import UserNotifications

extension HeraldCommand {
    /// Runs the device side: every app's local notifications fire and show on this terminal.
    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run Herald's local sandbox: schedules and shows every app's notifications on this terminal.",
            discussion: """
                Apps that use `UNUserNotificationCenter.current()` keep their requests in the data directory; while \
                `herald up` runs, their notifications fire here even when the app is not running. Stop with Ctrl-C. \
                The APNs-compatible gateway and the device daemon join this command in later releases.
                """
        )

        @OptionGroup var data: DataDirectoryOptions

        func run() async throws {
            var logger = Logger(label: "herald")
            logger.logLevel = .info
            let directory = data.directory
            let engine: NotificationEngine
            do {
                engine = try NotificationEngine.forDataDirectory(
                    directory, presenter: TerminalPresenter(output: .standardOutput), scope: nil, logger: logger
                )
            } catch {
                throw ValidationError("Cannot open \(directory.notificationDatabase.path): \(error). Pass a writable --data-dir.")
            }
            let apps = try await engine.store.bundleIdentifiers()
            var pendingCount = 0
            for app in apps { pendingCount += try await engine.store.pending(for: app).count }
            // Through the presenter's own file handle, unbuffered, so the banner always comes first.
            let banner = """
                Herald is up.
                  data directory: \(directory.url.path)
                  apps: \(apps.count), pending notifications: \(pendingCount)
                  schedule one:   herald notifications send com.example.app --title Hello --body 'from Herald' --in 5
                Notifications appear below as they fire. Ctrl-C stops.

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
            let group = ServiceGroup(services: [engine], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
        }
    }
}
