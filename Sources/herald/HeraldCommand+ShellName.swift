import Foundation

extension HeraldCommand {
    /// How a shell runs this `herald`: `herald` when that name on `PATH` is this executable, else its absolute path —
    /// so the commands a banner prints work as printed (from a checkout, `scripts/herald` builds `.build/debug/herald`,
    /// which no `PATH` holds until `scripts/install`).
    static let shellName: String = {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        let resolved = URL(fileURLWithPath: executable).resolvingSymlinksInPath().path
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("herald")
            guard FileManager.default.isExecutableFile(atPath: candidate.path) else { continue }
            // The first `herald` on PATH is the one the shell runs: this one or not.
            return candidate.resolvingSymlinksInPath().path == resolved ? "herald" : Up.shellQuoted(resolved)
        }
        return Up.shellQuoted(resolved)
    }()
}
