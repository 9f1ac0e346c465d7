#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CPU time from `getrusage`: this process's own, or that of its children that have exited and been waited for (a
/// client run as its own process, such as h2load or Python).
enum ResourceUsage {
    /// User plus system seconds of this process so far.
    static var ownCPUSeconds: Double { seconds(RUSAGE_SELF) }

    /// User plus system seconds of this process's finished children so far.
    static var childrenCPUSeconds: Double { seconds(RUSAGE_CHILDREN) }

    private static func seconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(who.rawValue), &usage) == 0 else { return 0 }
        func value(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return value(usage.ru_utime) + value(usage.ru_stime)
    }
}
