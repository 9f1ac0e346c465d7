import Foundation
import HeraldCore
import ServiceLifecycle

/// Checks every connected device each `interval` (``ConnectionLiveness``): a device that answers neither a ping nor
/// anything else for a whole interval is disconnected, so pushes for it are stored instead of sent into a dead
/// connection. Runs until cancelled or shut down gracefully.
struct DeviceLivenessCheck: Service {
    let hub: DeviceHub
    let clock: any HeraldClock
    /// How long between two checks: a silent device is disconnected one to two intervals after it went silent.
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await clock.sleep(until: clock.now.addingTimeInterval(interval.timeInterval))
                } catch {
                    return  // cancelled
                }
                hub.checkLiveness()
            }
        }
    }
}
