import Foundation

/// A test's own D-Bus session bus, as `dbus-daemon --session` runs it.
public enum SessionBus {
    /// Waits until `name` has an owner on the bus at `address` — asked with `NameHasOwner`, which, unlike a call to
    /// the name, never starts the bus's own copy of a service (a second dunst, which dies with signal 5 beside the
    /// test's) — at most `timeout`.
    ///
    /// - Parameters:
    ///   - name: The well-known name, e.g. `org.freedesktop.Notifications`.
    ///   - address: The bus's address (`unix:path=…`).
    ///   - timeout: The longest it waits.
    /// - Returns: Whether the name has an owner.
    public static func waitForOwner(of name: String, address: String, timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let asked = try await ChildProcess.run(
                "/usr/bin/gdbus",
                [
                    "call", "--address", address, "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                    "--method", "org.freedesktop.DBus.NameHasOwner", name,
                ], timeout: .seconds(30))
            if asked.status == 0 && asked.output.contains("true") { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
