import Foundation
import UserNotifications

extension VirtualClock {
    /// Waits until `engine` has finished everything due at this clock's current instant.
    package func settle(_ engine: NotificationEngine) async {
        await engine.activity.waitUntilIdle(now: { [self] in self.now })
    }

    /// Moves this clock to `date` through every deadline in between, letting `engine` finish each step, so each
    /// notification fires at its exact instant and in order.
    package func drive(_ engine: NotificationEngine, to date: Date) async {
        await settle(engine)
        while let next = [nextDeadline, engine.activity.loopDeadline].compactMap({ $0 }).min(), next <= date {
            advance(to: next)
            await settle(engine)
        }
        advance(to: date)
        await settle(engine)
    }
}
