import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import Synchronization
import Testing

@testable import HeraldGateway

/// Slow and stuck clients hold a socket only as long as Herald allows, and never hold up anyone else: a TLS handshake
/// never finished, SETTINGS never acknowledged, a device that never says hello or never reads (issue 25, limits).
@Suite(.heavy, .timeLimit(.minutes(3))) struct SlowClientTests {
    /// The setup timeout these tests run with: short, so that a stuck client is closed while the test waits, and long
    /// enough for a healthy client's handshake on a loaded machine (which retries if it was not).
    static let setupTimeout = Duration.seconds(10)
    /// How long a test waits for the gateway to close a stuck connection: the timeout, and a loaded machine's slack.
    static let closeWait = Duration.seconds(60)
    /// How many pushes go to the device that stopped reading.
    static let stuckPushes = 20

    static func configure(_ configuration: inout GatewayConfiguration) {
        configuration.connectionSetupTimeout = setupTimeout
    }

    /// How many connections the gateway dropped for `reason`, from its metrics.
    static func dropped(_ harness: GatewayHarness, _ reason: String) -> Int {
        let prefix = #"herald_connections_dropped_total{reason="\#(reason)"} "#
        return harness.gateway.metrics.prometheusText().split(separator: "\n")
            .first { $0.hasPrefix(prefix) }
            .flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    @Test("A provider connection that never finishes its TLS handshake is closed after the setup timeout; one that did stays")
    func tlsHandshakeNeverFinished() async throws {
        try await withGateway(configure: Self.configure) { harness, client in
            let silent = try await RawConnection.connect(port: harness.tlsPort)
            // The first bytes of a ClientHello's record header, then nothing.
            let halfHello = try await RawConnection.connect(port: harness.tlsPort)
            try await halfHello.write([0x16, 0x03, 0x01, 0x02])
            // A client that finished the handshake and acknowledged SETTINGS (NIO's HTTP/2 does), then says nothing.
            // Its acknowledgement must reach the gateway within the setup timeout too; on a machine loaded enough that
            // it did not (the gateway then ends it with GOAWAY SETTINGS_TIMEOUT, as it should), connect again.
            var settingsTimeouts = 0
            let (healthy, recorder) = try await Self.retried {
                settingsTimeouts = Self.dropped(harness, "settings_timeout")
                let (channel, recorder) = try await FrameRecorder.connect(harness)
                guard await recorder.wait(until: { !$0.settings.isEmpty }).isClosed == false else {
                    channel.close(promise: nil)
                    throw ChannelError.ioOnClosedChannel
                }
                // Well past the deadline: still open, no GOAWAY.
                try await Task.sleep(for: Self.setupTimeout * 2)
                let now = await recorder.wait(timeout: .zero) { _ in true }
                guard now.goAways.isEmpty, !now.isClosed else {
                    channel.close(promise: nil)
                    throw ChannelError.ioOnClosedChannel
                }
                return (channel, recorder)
            }
            defer { healthy.close(promise: nil) }

            #expect(await silent.waitUntilClosed(timeout: Self.closeWait))
            #expect(await halfHello.waitUntilClosed(timeout: Self.closeWait))
            #expect(Self.dropped(harness, "provider_setup_timeout") >= 2)
            // The healthy connection, well past both deadlines, serves a push.
            let token = try await harness.offlineToken().token
            FrameRecorder.push(on: healthy, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: try harness.jwt())
            let answered = await recorder.wait(untilEnded: [1])
            #expect(answered.statuses[1] == "200")
            #expect(answered.goAways.isEmpty && !answered.isClosed)
            #expect(Self.dropped(harness, "settings_timeout") == settingsTimeouts)
            _ = client
        }
    }

    @Test("RFC 9113 §6.5.3: a provider that never acknowledges the gateway's SETTINGS gets GOAWAY SETTINGS_TIMEOUT and is closed")
    func settingsNeverAcknowledged() async throws {
        try await withGateway(configure: Self.configure) { harness, client in
            var tls = try harness.clientTLS()
            tls.applicationProtocols = ["h2"]
            // The preface and an empty SETTINGS frame; the gateway's SETTINGS are read but never acknowledged. (Again if
            // a loaded machine's handshake outlasted the setup timeout.)
            let connection = try await Self.retried {
                try await Self.stuck(
                    port: harness.tlsPort, tls: tls, Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0])
            }
            #expect(await connection.waitUntilClosed(timeout: Self.closeWait))
            let goAways = Self.frames(connection.received).filter { $0.type == 7 }
            #expect(goAways.count == 1)
            // GOAWAY's payload: the last stream ID (4 bytes), then the error code: SETTINGS_TIMEOUT is 0x4.
            #expect(goAways.first.map { Array($0.payload.dropFirst(4).prefix(4)) } == [0, 0, 0, 4])
            #expect(Self.dropped(harness, "settings_timeout") >= 1)
            // Other providers are served as ever.
            let token = try await harness.offlineToken().token
            let status = try await client.push(
                port: harness.tlsPort, token: token,
                headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(try harness.jwt())")],
                body: #"{"aps":{"alert":"still here"}}"#
            ).status
            #expect(status == 200)
        }
    }

    @Test(
        "A device connection that never upgrades, or never says hello, is closed after the setup timeout; a device that did stays"
    )
    func deviceNeverSaysHello() async throws {
        try await withGateway(configure: Self.configure) { harness, _ in
            let tls = try harness.clientTLS()
            // On a loaded machine the deadline may close these before they get as far as they try to: that is the
            // promise too (nil: closed already).
            let silent = try? await RawConnection.connect(port: harness.ports.device)
            let noUpgrade = try? await Self.stuck(
                port: harness.ports.device, tls: tls, Array("GET /device/v1 HTTP/1.1\r\nHost: loc".utf8))
            let noHello = try? await Self.stuck(port: harness.ports.device, tls: tls, RawConnection.deviceUpgradeRequest)
            let (device, token) = try await Self.retried {
                let device = try await harness.connectDevice()
                do {
                    return (device, try await device.register(bundleID: GatewayHarness.bundleID))
                } catch {
                    await device.close()
                    throw error
                }
            }
            defer { Task { await device.close() } }

            for connection in [silent, noUpgrade, noHello] {
                #expect(await connection?.waitUntilClosed(timeout: Self.closeWait) ?? true)
            }
            #expect(Self.dropped(harness, "device_setup_timeout") >= 3)
            // Well past the deadline the device that said hello still gets its pushes (and acknowledges them).
            try await Task.sleep(for: Self.setupTimeout * 2)
            let received = Task {
                let push = try await nextPush(device)
                if let push { try await device.acknowledge(push) }
                return push
            }
            try await withTokenClient(harness) { provider, _ in
                let result = try await provider.send(
                    .alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text("hello"))), to: token)
                #expect(result.status == 200)
            }
            #expect(try await received.value != nil)
        }
    }

    @Test(
        "A device that stops reading holds up nothing: each push to it is answered 200 after its acknowledgement time and kept; it gets the newest when it comes back"
    )
    func deviceNeverReads() async throws {
        // Light on purpose: filling the socket buffers until the gateway disconnects the device takes over 3 MB of
        // pushes, which starved other tests' 10 s client timeouts when the suite ran in parallel. The disconnect is
        // tested on `DeviceSession` (DeviceSessionTests) and measured by `scripts/bench limits`.
        try await withGateway(acknowledgementTimeout: .seconds(2), configure: Self.configure) { harness, _ in
            // On a loaded machine the setup deadline may close the connection before it has registered: again then.
            let tls = try harness.clientTLS()
            let (stuck, token) = try await Self.retried {
                try await RawConnection.device(
                    port: harness.ports.device, tls: tls, deviceID: "never-reads", bundleID: GatewayHarness.bundleID,
                    receiveBufferSize: 4_096)
            }
            defer { Task { await stuck.close() } }
            try await stuck.stopReading()
            var statuses: [Int: Int] = [:]
            try await withTokenClient(harness) { provider, _ in
                statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<Self.stuckPushes {
                        group.addTask {
                            try await provider.send(
                                .alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text("push \(index)"))),
                                to: token
                            ).status
                        }
                    }
                    return try await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
                }
            }
            #expect(statuses == [200: Self.stuckPushes])
            // The device comes back (a new connection replaces the stuck one) and gets what was kept for it: one per
            // device and topic, the newest.
            let back = try await DeviceChannelClient.connect(
                to: "wss://localhost:\(harness.ports.device)/device/v1", deviceID: "never-reads", secret: "raw",
                tlsConfiguration: try harness.clientTLS(), logger: .init(label: "test.device"))
            defer { Task { await back.close() } }
            let kept = try await nextPush(back)
            #expect(kept?.fromStorage == true)
            if let kept { try await back.acknowledge(kept) }
        }
    }

    @Test(
        "A device that answers no ping is disconnected at the check after the one that pinged it (one task pings every device); one that answers stays"
    )
    func deviceThatAnswersNoPing() async throws {
        let clock = VirtualClock()
        try await withGateway(clock: clock, configure: { $0.devicePingInterval = .seconds(30) }) { harness, _ in
            let hub = harness.gateway.hub
            // Reads what the gateway sends, answers nothing (not even a ping) once registered.
            let (silent, _) = try await RawConnection.device(
                port: harness.ports.device, tls: try harness.clientTLS(), deviceID: "silent-device",
                bundleID: GatewayHarness.bundleID)
            defer { Task { await silent.close() } }
            let device = try await harness.connectDevice("answering-device")
            defer { Task { await device.close() } }
            _ = try await device.register(bundleID: GatewayHarness.bundleID)
            try await eventually("both sessions") {
                hub.session(for: "silent-device") != nil && hub.session(for: "answering-device") != nil
            }
            let answering = try #require(hub.session(for: "answering-device")?.liveness)
            func nextCheck() async throws {
                try await eventually("the check asleep until its next interval") {
                    clock.nextDeadline == clock.now.addingTimeInterval(30)
                }
                clock.advance(by: 30)
            }
            // The first check pings both (a WebSocket ping frame: 0x89, 6 bytes, unmasked); the client answers it.
            try await nextCheck()
            let ping: [UInt8] = [0x89, 0x06] + Array("herald".utf8)
            #expect(await silent.waitUntilReceived(timeout: .seconds(30)) { $0.firstRange(of: ping) != nil })
            try await eventually("the client's pong", timeout: .seconds(30)) { answering.answeredSinceLastCheck }
            // The second finds nothing from the silent one since: closed, counted. The answering one is pinged again.
            try await nextCheck()
            #expect(await silent.waitUntilClosed(timeout: .seconds(30)))
            #expect(Self.dropped(harness, "device_not_answering") == 1)
            try await eventually("the client's second pong", timeout: .seconds(30)) { answering.answeredSinceLastCheck }
            try await nextCheck()
            try await eventually("the third check ran") { clock.nextDeadline == clock.now.addingTimeInterval(30) }
            #expect(hub.session(for: "answering-device") != nil)
            #expect(Self.dropped(harness, "device_not_answering") == 1)
        }
    }

    @Test("A device that never answers the closing handshake does not hold up the gateway's shutdown")
    func shutdownWithAStuckDevice() async throws {
        let harness = try await GatewayHarness()
        let (stuck, _) = try await RawConnection.device(
            port: harness.ports.device, tls: try harness.clientTLS(), deviceID: "asleep", bundleID: GatewayHarness.bundleID)
        try await stuck.stopReading()
        let finished = Mutex(false)
        let shutdown = Task {
            await harness.shutdown()
            finished.withLock { $0 = true }
        }
        // Hummingbird's close frame goes unanswered; the gateway gives the device a few seconds, then closes it.
        for _ in 0..<600 where !finished.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(finished.withLock { $0 }, "the gateway did not stop within 60 s")
        await stuck.close()
        await shutdown.value
    }

    /// A TLS connection that sends `bytes` and then nothing.
    static func stuck(port: Int, tls: TLSConfiguration, _ bytes: [UInt8]) async throws -> RawConnection {
        let connection = try await RawConnection.connect(port: port, tls: tls)
        try await connection.write(bytes)
        return connection
    }

    /// Sets up a healthy connection, again if a loaded machine took longer than the setup timeout the first time
    /// (the gateway then closed it, as it should).
    static func retried<T>(_ connect: () async throws -> T) async throws -> T {
        for _ in 1..<3 {
            if let connected = try? await connect() { return connected }
        }
        return try await connect()
    }

    /// The HTTP/2 frames in `bytes`: type and payload.
    static func frames(_ bytes: [UInt8]) -> [(type: UInt8, payload: ArraySlice<UInt8>)] {
        var frames: [(UInt8, ArraySlice<UInt8>)] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 9 + length <= bytes.count else { break }
            frames.append((bytes[index + 3], bytes[(index + 9)..<(index + 9 + length)]))
            index += 9 + length
        }
        return frames
    }
}
