import HeraldCore
import HeraldTesting
import NIOSSL

extension RawConnection {
    /// A device on the device channel, spoken by hand: the WebSocket upgrade, a hello and one registration. The
    /// connection reads on until ``stopReading()``.
    ///
    /// - Parameters:
    ///   - port: The gateway's device port.
    ///   - tls: TLS trusting the gateway's certificate.
    ///   - deviceID: The device's ID.
    ///   - bundleID: The app to register.
    ///   - receiveBufferSize: `SO_RCVBUF` for the socket.
    /// - Returns: The connection and the app's device token.
    public static func device(
        port: Int, tls: TLSConfiguration, deviceID: String, bundleID: String, receiveBufferSize: Int? = nil
    ) async throws -> (connection: RawConnection, token: String) {
        let connection = try await connect(port: port, tls: tls, receiveBufferSize: receiveBufferSize)
        do {
            try await connection.write(deviceUpgradeRequest)
            try await connection.write(
                webSocketTextFrame(DeviceChannelMessage.hello(deviceID: deviceID, secret: "raw").jsonText()))
            try await connection.write(
                webSocketTextFrame(
                    DeviceChannelMessage.register(bundleID: bundleID, environment: .development, purpose: .app).jsonText()))
            let marker = Array(#""token":""#.utf8)
            guard await connection.waitUntilReceived(timeout: .seconds(60), { $0.firstRange(of: marker) != nil }),
                let range = connection.received.firstRange(of: marker)
            else { throw TimeoutError(timeout: .seconds(60)) }
            let token = String(
                decoding: connection.received[range.upperBound...].prefix { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
            return (connection, token)
        } catch {
            await connection.close()
            throw error
        }
    }

    /// The HTTP/1.1 request that upgrades a connection to the device channel's WebSocket.
    public static let deviceUpgradeRequest = Array(
        ("GET /device/v1 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)

    /// A client's WebSocket text frame (RFC 6455 §5.2: final, masked) carrying `text`.
    public static func webSocketTextFrame(_ text: String) -> [UInt8] {
        webSocketFrame(opcode: 0x1, Array(text.utf8))
    }

    /// A client's WebSocket frame (RFC 6455 §5.2: masked).
    ///
    /// - Parameters:
    ///   - opcode: The frame's opcode (0x0 continuation, 0x1 text, 0x2 binary, 0x8 close, 0x9 ping, 0xA pong).
    ///   - payload: What it carries.
    ///   - final: Whether it is the message's last frame.
    public static func webSocketFrame(opcode: UInt8, _ payload: [UInt8], final: Bool = true) -> [UInt8] {
        var frame: [UInt8] = [(final ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65_536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    /// The server's WebSocket frames in `bytes` (what a connection received): after the HTTP response that upgraded
    /// it, each unmasked frame's opcode and payload; a frame not whole yet is left out.
    public static func serverFrames(in bytes: [UInt8]) -> [(opcode: UInt8, payload: [UInt8])] {
        guard let headerEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return [] }
        var frames: [(opcode: UInt8, payload: [UInt8])] = []
        var index = headerEnd
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= bytes.count else { break }
                length = bytes[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            frames.append((opcode, Array(bytes[start..<start + length])))
            index = start + length
        }
        return frames
    }
}
