import Foundation
import HeraldCore

/// The app's view of its widgets on the device: Apple's `WidgetCenter`.
public final class WidgetCenter: Sendable {
    /// The app's widget center.
    public static let shared = WidgetCenter()

    private init() {}

    /// Has the device reload the timelines of the app's widgets of `kind` (their providers' `getTimeline` runs in the
    /// app's widget process).
    public func reloadTimelines(ofKind kind: String) {
        WidgetHost.shared.requestReload(controls: false, kinds: [kind], reason: "app")
    }

    /// Has the device reload the timelines of all the app's widgets.
    public func reloadAllTimelines() {
        WidgetHost.shared.requestReload(controls: false, kinds: nil, reason: "app")
    }

    /// The app's widgets on the device.
    public func currentConfigurations() async throws -> [WidgetInfo] {
        try await WidgetHost.shared.placed(controls: false).map { WidgetInfo(kind: $0.kind, family: $0.family) }
    }

    /// The app's widgets on the device, handed to `completion`.
    public func getCurrentConfigurations(_ completion: @escaping @Sendable (Result<[WidgetInfo], any Error>) -> Void) {
        Task {
            do {
                completion(.success(try await currentConfigurations()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// The widgets' push token (iOS 26): `nil` until it is issued, or when no widget registered a push handler.
    public var currentPushInfo: WidgetPushInfo? {
        get async { WidgetHost.shared.widgetToken.map { WidgetPushInfo(token: $0) } }
    }
}
