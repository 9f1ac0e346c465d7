import Foundation
import Glibc

enum Memory {
    /// The process's resident set size now.
    static func residentBytes() -> Int { statusField("VmRSS:") }

    /// Gives the memory malloc keeps free back to the system (glibc's `malloc_trim(0)`, looked up at run time): the
    /// resident size after it is what lives, without what an allocator keeps for later.
    static func trimFreeMemory() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// The process's peak resident set size.
    static func peakResidentBytes() -> Int { statusField("VmHWM:") }

    /// Another process's resident set size now.
    static func residentBytes(pid: Int32) -> Int { statusField("VmRSS:", process: "\(pid)") }

    private static func statusField(_ name: String, process: String = "self") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) })
        else { return 0 }
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes * 1_024
    }
}

/// `bytes` in whole megabytes (MiB), for a report: "97 MB".
func mb(_ bytes: Int) -> String {
    String(format: "%.0f MB", Double(bytes) / 1_048_576)
}
