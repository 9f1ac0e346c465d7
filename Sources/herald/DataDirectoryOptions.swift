import ArgumentParser
import Foundation
import HeraldCore
import Logging

/// The `--data-dir` option every subcommand that touches state takes.
struct DataDirectoryOptions: ParsableArguments {
    @Option(
        name: .customLong("data-dir"),
        help: "Where Herald keeps its state (default: $HERALD_DATA_DIR, $XDG_DATA_HOME/herald, ~/.local/share/herald).")
    var path: String?

    var directory: HeraldDataDirectory { HeraldDataDirectory.resolve(explicitPath: path) }

    /// Throws when the data directory does not exist: a command that only reads names it rather than making it.
    ///
    /// - Throws: ``CommandFailure`` naming the directory and how to choose another.
    func requireExisting() throws {
        var isDirectory: ObjCBool = false
        let url = directory.url
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure(
                "No Herald data directory at \(url.path): herald up or herald gateway makes one; name another with --data-dir or HERALD_DATA_DIR"
            )
        }
    }
}

extension HeraldDataDirectory {
    /// Says, once `herald up` or `herald gateway` is up, that it made the directory owner-only at start
    /// (``tightenPermissions()``), if it did.
    ///
    /// - Parameters:
    ///   - mode: The mode it had before, or `nil` when it was owner-only already.
    ///   - logger: Where to say it.
    func sayTightened(from mode: Int?, logger: Logger) {
        guard let mode else { return }
        logger.notice(
            "Made the data directory owner-only: its group or others could read its keys and tokens",
            metadata: ["directory": "\(url.path)", "mode.before": "\(String(mode, radix: 8))", "mode": "700"])
    }

    /// ` --data-dir <absolute path>` for a command line printed for another terminal, or nothing when this is the
    /// default location, the one a shell without `HERALD_DATA_DIR` or `XDG_DATA_HOME` resolves (a relative
    /// `--data-dir`, or one set by the environment, would name another directory there).
    ///
    /// - Parameter environment: The process environment (its `HOME`).
    func commandLineOption(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let plainDefault = HeraldDataDirectory.resolve(environment: environment["HOME"].map { ["HOME": $0] } ?? [:])
        return self == plainDefault ? "" : " --data-dir \(HeraldCommand.Up.shellQuoted(url.path))"
    }
}
