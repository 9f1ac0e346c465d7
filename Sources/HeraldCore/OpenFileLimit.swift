#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors, which bounds how many connections a server can hold.
public enum OpenFileLimit {
    /// Raises the soft limit to the hard limit (many systems start processes at 1,024 soft, far below what the hard
    /// limit allows): a gateway with ten thousand devices needs ten thousand descriptors.
    ///
    /// - Returns: The soft limit before and after, or `nil` when the limits cannot be read.
    @discardableResult
    public static func raiseToHardLimit() -> (before: Int, after: Int)? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        let before = Int(clamping: limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        guard setrlimit(resourceNumber, &raised) == 0 else { return (before, before) }
        return (before, Int(clamping: raised.rlim_cur))
    }

    /// The soft limit: how many descriptors the process may have open now; `nil` when it cannot be read.
    public static var softLimit: Int? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// The hard limit: how far the soft limit can be raised without privileges; `nil` when it cannot be read.
    public static var hardLimit: Int? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        return Int(clamping: limit.rlim_max)
    }

    private static var resourceNumber: Int32 {
        #if canImport(Glibc)
        Int32(RLIMIT_NOFILE.rawValue)
        #else
        RLIMIT_NOFILE
        #endif
    }
}
