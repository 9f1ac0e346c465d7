import ArgumentParser
import Foundation
import HeraldDevice
import Logging
import UserNotifications

/// Where the device shows notifications: this terminal, the desktop, or both.
struct PresenterOptions: ParsableArguments {
    enum Choice: String, ExpressibleByArgument, CaseIterable {
        /// The terminal, and the desktop when a session bus with a notification service is there.
        case auto
        case terminal
        case desktop
        case both
    }

    @Option(
        help:
            "Where notifications show: auto (the terminal, and the desktop's notifications when there is one), terminal, desktop or both."
    )
    var presenter: Choice = .auto

    @Flag(
        inversion: .prefixedNo,
        help:
            "Serve Linux apps as a UnifiedPush distributor (org.unifiedpush.Distributor.herald) on the session bus, when there is one."
    )
    var unifiedpush = true

    /// The session bus the device is a UnifiedPush distributor on: `DBUS_SESSION_BUS_ADDRESS`, unless turned off.
    var unifiedPushBus: String? {
        guard unifiedpush, let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty
        else { return nil }
        return address
    }

    /// The presenter to give the device's engine, and the desktop presenter inside it (whose answers need routing).
    ///
    /// - Throws: A `ValidationError` when `desktop` or `both` was asked for and the desktop cannot be reached.
    func makePresenter(logger: Logger) async throws -> (any NotificationPresenter, FreedesktopPresenter?) {
        let terminal = TerminalPresenter(output: .standardOutput)
        var desktop: FreedesktopPresenter?
        if presenter != .terminal {
            do {
                desktop = try await FreedesktopPresenter.connect(logger: logger)
            } catch  where presenter == .auto {
                logger.debug("No desktop notifications: notifications show on this terminal", metadata: ["error": "\(error)"])
            } catch {
                throw ValidationError(
                    "Cannot reach the desktop's notification service (org.freedesktop.Notifications on the session bus): \(error). Use --presenter terminal, or run inside a desktop session."
                )
            }
        }
        switch (presenter, desktop) {
        case (.desktop, let desktop?): return (desktop, desktop)
        case (_, let desktop?): return (CompositePresenter([terminal, desktop]), desktop)
        case (_, nil): return (terminal, nil)
        }
    }
}

/// How the device runs apps' notification service extensions.
struct ServiceExtensionOptions: ParsableArguments {
    @Option(help: "Seconds a notification service extension has before serviceExtensionTimeWillExpire (iOS: about 30).")
    var serviceExtensionTime: Double = 30

    func validate() throws {
        guard serviceExtensionTime > 0, serviceExtensionTime <= 3_600 else {
            throw ValidationError("--service-extension-time takes seconds between 0 and 3600 (iOS gives about 30).")
        }
    }

    var timeLimit: Duration { .milliseconds(Int64(serviceExtensionTime * 1_000)) }
}
