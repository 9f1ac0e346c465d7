import Foundation
import Synchronization
import UserNotifications

/// A presenter that remembers what it was asked to show, for assertions.
public final class RecordingPresenter: NotificationPresenter {
    private let recorded = Mutex<[NotificationPresentation]>([])
    private let activities = Mutex<[LiveActivityPresentation]>([])

    public init() {}

    public func present(_ presentation: NotificationPresentation) async {
        recorded.withLock { $0.append(presentation) }
    }

    public func presentLiveActivity(_ activity: LiveActivityPresentation) async {
        activities.withLock { $0.append(activity) }
    }

    /// Every Live Activity shown so far (each change once), in order.
    public var liveActivities: [LiveActivityPresentation] { activities.withLock { $0 } }

    /// Everything presented so far, in order.
    public var presentations: [NotificationPresentation] { recorded.withLock { $0 } }

    /// Forgets what was presented.
    public func reset() {
        recorded.withLock { $0.removeAll() }
        activities.withLock { $0.removeAll() }
    }
}
