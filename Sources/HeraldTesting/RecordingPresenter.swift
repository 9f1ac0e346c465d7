import Foundation
import Synchronization
import UserNotifications

/// A presenter that remembers what it was asked to show, for assertions.
public final class RecordingPresenter: NotificationPresenter {
    private let recorded = Mutex<[NotificationPresentation]>([])

    public init() {}

    public func present(_ presentation: NotificationPresentation) async {
        recorded.withLock { $0.append(presentation) }
    }

    /// Everything presented so far, in order.
    public var presentations: [NotificationPresentation] { recorded.withLock { $0 } }

    /// Forgets what was presented.
    public func reset() {
        recorded.withLock { $0.removeAll() }
    }
}
