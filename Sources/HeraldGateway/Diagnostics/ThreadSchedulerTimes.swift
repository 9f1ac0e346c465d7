#if canImport(Glibc)
import Glibc
#endif

/// The kernel's account of one thread's time: on a core, and runnable but waiting for one (Linux's
/// `/proc/thread-self/schedstat`, nanoseconds).
struct ThreadSchedulerTimes: Sendable {
    /// Time the thread ran on a core.
    var onCore: Int64
    /// Time the thread was runnable but waited for a core.
    var waitingForCore: Int64

    /// The calling thread's times, or `nil` where the kernel does not say. A read of procfs, which never waits for
    /// a disk.
    static func ofCallingThread() -> ThreadSchedulerTimes? {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/schedstat", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 96)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let onCore = Int64(String(decoding: fields[0], as: UTF8.self)),
            let waiting = Int64(String(decoding: fields[1], as: UTF8.self))
        else { return nil }
        return ThreadSchedulerTimes(onCore: onCore, waitingForCore: waiting)
        #else
        return nil
        #endif
    }
}
