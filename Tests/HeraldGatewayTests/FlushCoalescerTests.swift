import NIOCore
import NIOEmbedded
import Testing

@testable import HeraldGateway

/// The provider connection's flushes: those asked for in one turn of the event loop leave as one.
@Suite struct FlushCoalescerTests {
    /// Counts the flushes that reach the head of the pipeline.
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var flushes = 0

        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    private func channel() throws -> (EmbeddedChannel, FlushCounter) {
        let channel = EmbeddedChannel()
        let counter = FlushCounter()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(FlushCoalescer())
        return (channel, counter)
    }

    @Test("Two answers written and flushed in one turn of the loop leave in one flush, in order, once the turn's tasks ran")
    func flushesOfOneTurnAreOne() throws {
        let (channel, counter) = try channel()
        channel.write(ByteBuffer(string: "first"), promise: nil)
        channel.flush()
        channel.write(ByteBuffer(string: "second"), promise: nil)
        channel.flush()
        #expect(counter.flushes == 0)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "first"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "second"))
        // A later turn flushes again.
        channel.write(ByteBuffer(string: "third"), promise: nil)
        channel.flush()
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 2)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "third"))
        _ = try channel.finish()
    }

    @Test("A close flushes what is held first (a GOAWAY written just before closing is sent)")
    func closeFlushesFirst() throws {
        let (channel, counter) = try channel()
        channel.write(ByteBuffer(string: "goaway"), promise: nil)
        channel.flush()
        channel.close(promise: nil)
        #expect(counter.flushes == 1)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "goaway"))
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
    }
}
