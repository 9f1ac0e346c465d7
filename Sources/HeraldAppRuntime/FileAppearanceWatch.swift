import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Tells when a file of a given name appears in a folder — made, or moved there — with no polling: Linux's inotify,
/// read by a Dispatch source when the kernel has news.
///
/// The app runtime watches for the device daemon's socket with it while the app runs alone: a daemon that starts
/// later is linked at once instead of at the next look.
final class FileAppearanceWatch: Sendable {
    /// One element each time the file appears (the latest kept while nobody waits).
    let appearances: AsyncStream<Void>
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Watches `file`'s folder for `file`; `nil` where the system cannot watch it (no inotify, no such folder, no
    /// watches left), and the caller looks from time to time instead.
    ///
    /// - Parameter file: The file to watch for.
    init?(for file: URL) {
        #if canImport(Glibc)
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let folder = file.deletingLastPathComponent().path
        guard inotify_add_watch(descriptor, folder, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
            close(descriptor)
            return nil
        }
        let name = Array(file.lastPathComponent.utf8)
        let (appearances, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.appearances = appearances
        let source = DispatchSource.makeReadSource(
            fileDescriptor: descriptor, queue: DispatchQueue(label: "herald.app-runtime.file-watch"))
        source.setEventHandler {
            if Self.readEvents(descriptor).contains(name) { continuation.yield() }
        }
        source.setCancelHandler {
            close(descriptor)
            continuation.finish()
        }
        source.resume()
        self.source = Mutex(source)
        #else
        return nil
        #endif
    }

    deinit {
        stop()
    }

    /// Stops watching: ``appearances`` finishes and the watch's descriptor is closed.
    func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }

    #if canImport(Glibc)
    /// The names of the files the events waiting on `descriptor` are about (read without blocking, every event there).
    private static func readEvents(_ descriptor: Int32) -> [[UInt8]] {
        var names: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return names }
            // Each event: wd (4), mask (4), cookie (4), len (4), then `len` bytes of the name, NUL-padded.
            var offset = 0
            while offset + 16 <= count {
                let length = buffer[(offset + 12)..<(offset + 16)].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
                let start = offset + 16
                let end = min(start + length, count)
                names.append(Array(buffer[start..<end].prefix { $0 != 0 }))
                offset = start + length
            }
        }
    }
    #endif
}
