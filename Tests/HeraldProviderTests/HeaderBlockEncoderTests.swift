import HeraldCore
import NIOCore
import NIOHPACK
import Testing

@testable import HeraldProvider

/// HeraldProvider's own HPACK encoder against NIOHPACK's decoder (an independent implementation of RFC 7541).
@Suite struct HeaderBlockEncoderTests {
    @Test("3,000 random requests decode as sent, the decoder's table following the encoder's through evictions and limit changes")
    func randomBlocksRoundTrip() throws {
        var random = SplitMix64(seed: 20_261_129)
        var encoder = HeaderBlockEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let names = [":method", ":path", ":authority", "apns-topic", "apns-id", "authorization", "x-custom", "content-type"]
        var limit = 4096
        for round in 0..<3000 {
            if round % 250 == 249 {
                // The peer's SETTINGS_HEADER_TABLE_SIZE changes: its decoder accepts the new size at once.
                limit = [0, 64, 300, 4096, 65_536].randomElement(using: &random)!
                encoder.setPeerLimit(limit)
                decoder.maxDynamicTableLength = limit
            }
            var fields: [HeaderBlockEncoder.Field] = []
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let name = names.randomElement(using: &random)!
                // Values from a small set repeat (and get indexed); long ones evict others.
                let value =
                    Bool.random(using: &random)
                    ? "v\(Int.random(in: 0..<12, using: &random))"
                    : String(repeating: "é", count: Int.random(in: 0...700, using: &random))
                fields.append(.init(name, value, isIndexable: Int.random(in: 0..<4, using: &random) != 0))
            }
            var block = ByteBuffer()
            encoder.encode(fields, into: &block)
            let decoded = try decoder.decodeHeaders(from: &block)
            #expect(decoded.map { "\($0.name): \($0.value)" } == fields.map { "\($0.name): \($0.value)" }, "round \(round)")
            #expect(block.readableBytes == 0)
            #expect(encoder.maximumTableSize == min(limit, 4096))
        }
    }

    @Test("A repeated request costs a byte for each field that repeats; per-request values stay literal")
    func repeatedFieldsAreReferences() throws {
        var encoder = HeaderBlockEncoder()
        let jwt = String(repeating: "j", count: 250)
        func request(_ id: String) -> [HeaderBlockEncoder.Field] {
            [
                .init(":method", "POST"), .init(":scheme", "https"), .init(":authority", "api.push.apple.com"),
                .init(":path", "/3/device/" + String(repeating: "a", count: 64), isIndexable: false),
                .init("apns-topic", "com.example.app"), .init("apns-push-type", "alert"),
                .init("apns-id", id, isIndexable: false), .init("authorization", "bearer " + jwt),
            ]
        }
        var first = ByteBuffer()
        encoder.encode(request("1"), into: &first)
        var second = ByteBuffer()
        encoder.encode(request("2"), into: &second)
        // :method and :scheme are static entries (1 byte each) both times; :authority, the topic, the push type and the
        // token become one byte each; the path (1 + 1 + 74) and the apns-id (literal name: 1 + 8 + 1 + 1) stay literal.
        #expect(second.readableBytes == 2 + 4 + 76 + 11)
        #expect(first.readableBytes > second.readableBytes + 250)
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        #expect(try decoder.decodeHeaders(from: &first).first(name: "authorization") == "bearer " + jwt)
        let decoded = try decoder.decodeHeaders(from: &second)
        #expect(decoded.first(name: "authorization") == "bearer " + jwt)
        #expect(decoded.first(name: "apns-id") == "2")
    }

    @Test("A peer limit of 0: the next block starts with the size update and nothing is indexed")
    func zeroTable() throws {
        var encoder = HeaderBlockEncoder()
        var warm = ByteBuffer()
        encoder.encode([.init("apns-topic", "com.example")], into: &warm)
        encoder.setPeerLimit(0)
        var blocks: [ByteBuffer] = []
        for _ in 0..<2 {
            var block = ByteBuffer()
            encoder.encode([.init("apns-topic", "com.example")], into: &block)
            blocks.append(block)
        }
        #expect(blocks[0].getInteger(at: 0, as: UInt8.self) == 0x20)
        #expect(blocks[0].readableBytes == blocks[1].readableBytes + 1)
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try decoder.decodeHeaders(from: &warm)
        decoder.maxDynamicTableLength = 0
        for var block in blocks { #expect(try decoder.decodeHeaders(from: &block).first(name: "apns-topic") == "com.example") }
    }
}
