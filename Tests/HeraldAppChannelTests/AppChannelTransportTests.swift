import Foundation
import Logging
import Testing

@testable import HeraldAppChannel

/// The app channel's transport on a real Unix socket: lines in order both ways, the peer's credentials, one daemon per
/// socket, a stale socket replaced, a line over the limit answered and closed.
@Suite(.timeLimit(.minutes(1))) struct AppChannelTransportTests {
    /// A listener on a fresh socket (a short path: a Unix socket's holds 107 bytes), closed and removed afterwards.
    func withListener(
        overLimitAnswer: Data? = nil, _ body: (AppChannelListener, String) async throws -> Void
    ) async throws {
        let folder = "/tmp/hch-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/s.sock"
        let listener = try await AppChannelListener.listen(
            at: path, logger: Logger(label: "test"), overLimitAnswer: overLimitAnswer)
        do {
            try await body(listener, path)
        } catch {
            await listener.close()
            throw error
        }
        await listener.close()
    }

    @Test("Lines go both ways in order, each without its newline; the peer is this process, of this user")
    func linesBothWays() async throws {
        try await withListener { listener, path in
            let client = try await AppChannelConnection.connect(to: path)
            defer { client.close() }
            var accepted = listener.connections.makeAsyncIterator()
            let server = try #require(await accepted.next())
            defer { server.close() }
            #expect(server.peer.processID == getpid())
            #expect(server.peer.userID == getuid())
            for line in ["one", "{\"two\":2}", ""] { client.send(Data(line.utf8)) }
            var lines = server.frames.makeAsyncIterator()
            #expect(await lines.next() == Data("one".utf8))
            #expect(await lines.next() == Data("{\"two\":2}".utf8))
            #expect(await lines.next() == Data())
            try await server.sendAndWait(Data("back".utf8))
            var replies = client.frames.makeAsyncIterator()
            #expect(await replies.next() == Data("back".utf8))
            server.close()
            #expect(await replies.next() == nil, "the client's stream ends when the daemon closes")
        }
    }

    @Test("One daemon per socket: a second listener on a live socket is refused; a socket file left by a crash is replaced")
    func oneListenerPerSocket() async throws {
        try await withListener { _, path in
            await #expect(throws: AppChannelListener.InUse.self) {
                _ = try await AppChannelListener.listen(at: path, logger: Logger(label: "test"))
            }
        }
        let folder = "/tmp/hch-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stale = folder + "/s.sock"
        #expect(FileManager.default.createFile(atPath: stale, contents: Data("left over".utf8)))
        let listener = try await AppChannelListener.listen(at: stale, logger: Logger(label: "test"))
        let client = try await AppChannelConnection.connect(to: stale)
        client.close()
        await listener.close()
        #expect(!FileManager.default.fileExists(atPath: stale), "closing removes the socket file")
    }

    @Test("A socket path longer than a Unix address holds is refused with its own error")
    func pathTooLong() async {
        let path = "/tmp/" + String(repeating: "p", count: 120)
        await #expect(throws: AppChannelError.pathTooLong(path)) {
            _ = try await AppChannelListener.listen(at: path, logger: Logger(label: "test"))
        }
    }

    @Test("A line far over the limit gets the listener's answer, then the connection closes")
    func overLimit() async throws {
        try await withListener(overLimitAnswer: Data("too long".utf8)) { listener, path in
            let client = try await AppChannelConnection.connect(to: path)
            defer { client.close() }
            var accepted = listener.connections.makeAsyncIterator()
            let server = try #require(await accepted.next())
            defer { server.close() }
            client.send(Data(repeating: UInt8(ascii: "x"), count: 2 * AppChannelConnection.maximumLineLength))
            var replies = client.frames.makeAsyncIterator()
            #expect(await replies.next() == Data("too long".utf8))
            #expect(await replies.next() == nil)
            var lines = server.frames.makeAsyncIterator()
            #expect(await lines.next() == nil, "the daemon's side sees no line, only the end")
        }
    }
}
