import ArgumentParser
import HeraldCore

/// The `--data-dir` option every subcommand that touches state takes.
struct DataDirectoryOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"),
            help: "Where Herald keeps its state (default: $HERALD_DATA_DIR, $XDG_DATA_HOME/herald, ~/.local/share/herald).")
    var path: String?

    var directory: HeraldDataDirectory { HeraldDataDirectory.resolve(explicitPath: path) }
}
