import Foundation
import HeraldCore
import HeraldDeviceChannel
import Hummingbird
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// What the device's end writes when it acknowledges, against a scripted gateway that records every message.
@Suite(.timeLimit(.minutes(1))) struct DeviceChannelClientAcknowledgementTests {
    @Test("A broadcast (a push with a channel ID) is not acknowledged: best effort, kept by its channel; a push to a token is")
    func broadcastsAreNotAcknowledged() async throws {
        let broadcast = DevicePush(
            deliveryID: "broadcast-1", token: "", topic: "com.example.app.push-type.liveactivity", bundleID: "com.example.app",
            pushType: "liveactivity", priority: 10, apnsID: UUID().uuidString, collapseID: nil,
            payload: #"{"aps":{"event":"update","timestamp":1}}"#, fromStorage: false, channelID: "Y2hhbm5lbA==")
        let unicast = DevicePush(
            deliveryID: "unicast-1", token: String(repeating: "a", count: 64), topic: "com.example.app",
            bundleID: "com.example.app",
            pushType: "alert", priority: 10, apnsID: UUID().uuidString, collapseID: nil, payload: #"{"aps":{"alert":"hi"}}"#,
            fromStorage: false)
        let acknowledged = try await ScriptedDeviceGateway.run(sending: [broadcast, unicast]) { url in
            let client = try await DeviceChannelClient.connect(to: url, deviceID: "scripted", secret: "s")
            var pushes: [DevicePush] = []
            for await push in client.pushes {
                pushes.append(push)
                if pushes.count == 2 { break }
            }
            #expect(pushes.map(\.deliveryID) == ["broadcast-1", "unicast-1"])
            // The broadcast first: had it written an ack, the gateway would read it before the unicast's.
            for push in pushes { try await client.acknowledge(push) }
            await client.close()
        }
        #expect(acknowledged == ["unicast-1"])
    }
}

/// A device-channel endpoint that welcomes a device, sends it `pushes`, and records the delivery IDs it acknowledges
/// until it closes.
private enum ScriptedDeviceGateway {
    static func run(
        sending pushes: [DevicePush], _ body: @escaping @Sendable (String) async throws -> Void
    ) async throws -> [String] {
        let acknowledged = Mutex<[String]>([])
        let (closed, closedSink) = AsyncStream.makeStream(of: Void.self)
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/device/v1") { inbound, outbound, _ in
            defer { closedSink.yield() }
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message, let decoded = DeviceChannelMessage(jsonText: text) else { continue }
                switch decoded {
                case .hello(let deviceID, _):
                    try await outbound.write(.text(DeviceChannelMessage.welcome(deviceID: deviceID).jsonText()))
                    for push in pushes { try await outbound.write(.text(DeviceChannelMessage.push(push).jsonText())) }
                case .ack(let deliveryID, _):
                    acknowledged.withLock { $0.append(deliveryID) }
                default:
                    continue
                }
            }
        }
        var logger = Logger(label: "test.scripted-gateway")
        logger.logLevel = .critical
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: Router(),
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) },
            logger: logger)
        let group = ServiceGroup(services: [application], gracefulShutdownSignals: [], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            var portIterator = ports.makeAsyncIterator()
            guard let port = await portIterator.next() else { throw CancellationError() }
            try await body("ws://127.0.0.1:\(port)/device/v1")
            // The server has read everything once the device's connection ended on its side.
            var closedIterator = closed.makeAsyncIterator()
            await closedIterator.next()
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
        return acknowledged.withLock { $0 }
    }
}
