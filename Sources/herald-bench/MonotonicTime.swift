import Dispatch

/// The machine's monotonic clock, which every process on it reads alike: times taken in different processes compare.
enum MonotonicTime {
    /// Nanoseconds since boot on the monotonic clock (`CLOCK_MONOTONIC` on Linux, which `DispatchTime` reads).
    static func nanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}
