import Foundation
import UserNotifications

extension VirtualClock {
    /// Waits until `engine` has finished everything due at this clock's current instant.
    package func settle(_ engine: NotificationEngine) async {
        await engine.activity.waitUntilIdle(now: { [self] in self.now })
    }

    /// Moves this clock to `date` through every deadline in between, letting `engine` finish each step, so each
    /// notification fires at its exact instant and in order.
    ///
    /// Each step goes to the deadline the engine was idle with: its loop may wake a moment later to look at its queue
    /// again and, read then, have no deadline at all.
    package func drive(_ engine: NotificationEngine, to date: Date) async {
        var loopDeadline = await engine.activity.waitUntilIdle(now: { [self] in self.now })
        while let next = [nextDeadline, loopDeadline].compactMap({ $0 }).min(), next <= date {
            advance(to: next)
            loopDeadline = await engine.activity.waitUntilIdle(now: { [self] in self.now })
        }
        advance(to: date)
        await settle(engine)
    }
}
