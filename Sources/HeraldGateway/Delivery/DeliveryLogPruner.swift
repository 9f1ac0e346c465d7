import Foundation
import HeraldCore
import Logging
import ServiceLifecycle

/// Keeps the delivery log to its retention (C-04: 7 days): prunes at start and then hourly, until cancelled or shut
/// down gracefully.
struct DeliveryLogPruner: Service {
    let store: any DeliveryLogStore
    let clock: any HeraldClock
    /// How long an event is kept.
    let retention: Duration
    let logger: Logger
    /// How often to prune.
    var interval: TimeInterval = 3600

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await store.pruneEvents(before: clock.now.addingTimeInterval(-retention.timeInterval))
                } catch {
                    logger.warning("Could not prune the delivery log", metadata: ["error": "\(error)"])
                }
                do {
                    try await clock.sleep(until: clock.now.addingTimeInterval(interval))
                } catch {
                    return  // cancelled
                }
            }
        }
    }
}
