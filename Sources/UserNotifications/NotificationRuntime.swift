import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

/// How `UNUserNotificationCenter.current()` finds its center.
package enum NotificationRuntime {
    /// A center that `current()` returns within a task (the testing kit runs app code against its own center).
    @TaskLocal package static var scopedCenter: UncheckedSendableBox<UNUserNotificationCenter>?

    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: UNUserNotificationCenter?

    /// Runs `body` with `center` as the task's current center, and its runtime as the one ActivityKit, PushKit and
    /// WidgetKit use.
    ///
    /// - Parameters:
    ///   - center: The center `current()` returns within `body`.
    ///   - body: The code to run.
    package static func withCenter<T>(
        _ center: UNUserNotificationCenter, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        try await $scopedCenter.withValue(UncheckedSendableBox(center)) {
            try await AppRuntime.$scoped.withValue(center.runtime) {
                try await body()
            }
        }
    }

    /// The process's center, made on first use over the process's runtime (``AppRuntime/processRuntime()``).
    static func processCenter() -> UNUserNotificationCenter {
        lock.withLock {
            if let shared { return shared }
            let center = UNUserNotificationCenter(runtime: AppRuntime.processRuntime())
            shared = center
            return center
        }
    }

    /// The center `current()` would return, if it exists already (`nil` instead of making the process's center).
    package static var existingCenter: UNUserNotificationCenter? {
        if let scoped = scopedCenter { return scoped.value }
        return lock.withLock { shared }
    }

    /// Builds a center as a process gets it from `current()`, on a runtime of its own made from `environment` (see
    /// ``AppRuntime/process(environment:)``).
    ///
    /// - Parameter environment: The process environment.
    static func makeProcessCenter(environment: [String: String]) -> UNUserNotificationCenter {
        UNUserNotificationCenter(runtime: AppRuntime.process(environment: environment))
    }
}
