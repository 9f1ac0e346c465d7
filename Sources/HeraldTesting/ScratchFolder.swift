import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Temporary folders for tests, all inside one folder of this process's that is removed when the process exits.
///
/// A test that stops half-way (a failed `#require`, a thrown error) leaves nothing behind for the next run: what it
/// made goes with the process (unless the process crashes).
public enum ScratchFolder {
    /// This process's folder of scratch folders, made on first use.
    private static let root: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ScratchFolder.root) }
        return url
    }()

    /// A new, empty folder, removed with the others when the process exits.
    ///
    /// - Parameter prefix: The start of its name (a unique identifier follows), to tell what made it.
    /// - Returns: The folder's URL.
    public static func make(_ prefix: String = "herald-test") throws -> URL {
        let url = Self.url(prefix)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new folder's URL, not yet made (for what creates its own folder, such as a data directory).
    ///
    /// - Parameter prefix: The start of its name (a unique identifier follows).
    /// - Returns: A URL inside this process's scratch folder that nothing uses yet.
    public static func url(_ prefix: String) -> URL {
        // Eight random hex digits, not a whole UUID: a Unix socket's path inside (an app channel, 108 bytes at most)
        // must fit under whatever $TMPDIR is.
        while true {
            let url = root.appendingPathComponent(
                "\(prefix)-\(String(UInt32.random(in: .min ... .max), radix: 16))", isDirectory: true)
            if !FileManager.default.fileExists(atPath: url.path) { return url }
        }
    }
}
