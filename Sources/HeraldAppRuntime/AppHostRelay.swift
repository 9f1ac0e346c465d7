import HeraldDeviceProtocol
import HeraldNotificationEngine
import Synchronization

/// The runtime's host for the engine and the daemon's link: hands every question to the app's installed host (held
/// weakly), and answers as an app without a delegate would while there is none.
final class AppHostRelay: NotificationHost, Sendable {
    private struct Installed: @unchecked Sendable {
        weak var host: (any AppHost)?
    }

    private let installed = Mutex(Installed())
    private let outlivesHost: Bool

    /// - Parameter outlivesHost: Whether the relay counts as alive without a host (the process's runtime).
    init(outlivesHost: Bool) {
        self.outlivesHost = outlivesHost
    }

    func install(_ host: any AppHost) {
        installed.withLock { $0.host = host }
    }

    private var host: (any AppHost)? { installed.withLock { $0.host } }

    /// Whether the runtime is still wanted: the process's always is; a center's own while its center exists.
    var isAlive: Bool { outlivesHost || host != nil }
    /// Whether the app is in front of the person (it is, until its host says otherwise).
    var isInForeground: Bool { host?.isInForeground ?? true }

    var presentsInForeground: Bool { host?.presentsInForeground ?? false }
    var takesResponses: Bool { host?.takesResponses ?? false }

    func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? {
        await host?.willPresent(notification)
    }

    func didReceive(_ response: QueuedResponse) async -> Bool {
        await host?.didReceive(response) ?? false
    }

    func backgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        await AppRuntime.handlers.handleBackgroundPush(payload)
    }
}
