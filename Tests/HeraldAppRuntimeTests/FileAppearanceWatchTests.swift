import Foundation
import HeraldAppChannel
import HeraldTesting
import Logging
import NIOPosix
import Testing

@testable import HeraldAppRuntime

/// The app runtime's way to notice a daemon that starts after the app: told when its socket appears, with no polling.
@Suite(.timeLimit(.minutes(1))) struct FileAppearanceWatchTests {
    @Test("The file made in the folder, and the file moved there, each appear; stop ends the stream")
    func appearances() async throws {
        let folder = try ScratchFolder.make("file-watch")
        let socket = folder.appendingPathComponent("herald.sock")
        let watch = try #require(FileAppearanceWatch(for: socket))
        var appearances = watch.appearances.makeAsyncIterator()
        try await NIOThreadPool.singleton.runIfActive {
            try Data("other".utf8).write(to: folder.appendingPathComponent("other.sock"))
            try Data().write(to: socket)
        }
        #expect(await appearances.next() != nil, "made")
        try await NIOThreadPool.singleton.runIfActive {
            try FileManager.default.removeItem(at: socket)
            // Another file's change, then the socket moved into place.
            try Data("again".utf8).write(to: folder.appendingPathComponent("other.sock"))
            try Data().write(to: folder.appendingPathComponent("herald.sock.tmp"))
            try FileManager.default.moveItem(at: folder.appendingPathComponent("herald.sock.tmp"), to: socket)
        }
        #expect(await appearances.next() != nil, "moved there")
        watch.stop()
        #expect(await appearances.next() == nil, "stopped: the stream ends")
    }

    @Test("A daemon's socket bound in the folder appears")
    func daemonSocket() async throws {
        let folder = try ScratchFolder.make("file-watch")
        let socket = folder.appendingPathComponent("herald.sock")
        let watch = try #require(FileAppearanceWatch(for: socket))
        var appearances = watch.appearances.makeAsyncIterator()
        let listener = try await AppChannelListener.listen(at: socket.path, logger: Logger(label: "test.file-watch"))
        #expect(await appearances.next() != nil)
        await listener.close()
        watch.stop()
    }

    @Test("A folder that does not exist cannot be watched: nil, and the runtime looks from time to time instead")
    func noFolder() throws {
        let folder = try ScratchFolder.make("file-watch").appendingPathComponent("absent")
        #expect(FileAppearanceWatch(for: folder.appendingPathComponent("herald.sock")) == nil)
    }
}
