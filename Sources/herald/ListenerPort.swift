import ArgumentParser

/// A listener's port as an option gives it, checked when the command line is read so that a port out of range is
/// one clear line instead of a socket error at start.
enum ListenerPort {
    /// The value that turns an optional listener off (`--console-port -1`).
    static let off = -1

    /// A port from 0 to 65535 (0 picks a free one).
    ///
    /// - Parameter text: The option's value.
    static func parse(_ text: String) throws -> Int {
        guard let port = Int(text), (0...65_535).contains(port) else {
            throw ValidationError("a port is a number from 0 to 65535 (0 picks a free one)")
        }
        return port
    }

    /// A port from 0 to 65535, or -1 for "off".
    ///
    /// - Parameter text: The option's value.
    static func parseOrOff(_ text: String) throws -> Int {
        guard let port = Int(text), port == off || (0...65_535).contains(port) else {
            throw ValidationError("a port is a number from 0 to 65535 (0 picks a free one), or -1 to turn it off")
        }
        return port
    }
}
