import Foundation

/// CPU time (user + system) of processes, from `/proc/<pid>/stat`: what a run cost each side of it.
struct ProcessCPU {
    /// Seconds of CPU by process ID.
    var seconds: [Int32: Double]

    /// The CPU time of `roots` and, with `children`, of every process whose parent is one of them (a PostgreSQL
    /// server's backends).
    ///
    /// - Parameters:
    ///   - roots: The processes.
    ///   - children: Whether their direct children count too.
    static func sample(_ roots: [Int32], children: Bool = false) -> ProcessCPU {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var seconds: [Int32: Double] = [:]
        let rootSet = Set(roots)
        let pids =
            children
            ? ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init)
            : roots
        for pid in pids {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm)": state ppid … utime (field 14) stime (field 15), counting from pid as field 1.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let parent = Int32(fields[1]), let user = Double(fields[11]), let system = Double(fields[12])
            else { continue }
            if rootSet.contains(pid) || (children && rootSet.contains(parent)) {
                seconds[pid] = (user + system) / ticks
            }
        }
        return ProcessCPU(seconds: seconds)
    }

    /// Seconds of CPU spent since `earlier` (a process that started since counts from zero).
    func since(_ earlier: ProcessCPU) -> Double {
        seconds.reduce(0) { total, entry in total + max(0, entry.value - (earlier.seconds[entry.key] ?? 0)) }
    }
}
