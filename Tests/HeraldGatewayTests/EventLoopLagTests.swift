import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldTestSupport
import InMemoryLogging
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import HeraldGateway

/// The gateway's event-loop watchdog: a stalled loop is measured, logged and exported.
@Suite(.heavy, .timeLimit(.minutes(1))) struct EventLoopLagTests {
    @Test("A loop blocked for 400 ms is measured as lagging that long and logged; only lags over the threshold are logged")
    func stallIsMeasuredAndLogged() async throws {
        // A loop of its own, blocked on purpose: that is what the monitor is for.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let handler = InMemoryLogHandler()
        let recorded = RecordedLags()
        let monitor = EventLoopLagMonitor(
            group: group, interval: .milliseconds(20), logger: Logger(label: "test") { _ in handler }
        ) { lag, loop in recorded.append(lag, loop) }
        monitor.start()
        let loop = group.next()
        // Idle first: it is measured again and again. (How late an idle loop runs depends on how loaded the machine
        // is, so that is not asserted; what is logged is below.)
        for _ in 0..<200 where monitor.sampleCount < 3 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(monitor.sampleCount >= 3)

        _ = try await loop.submit { usleep(400_000) }.get()
        try await Task.sleep(for: .milliseconds(100))
        monitor.stop()
        try await group.shutdownGracefully()
        #expect(monitor.maximumLag >= .milliseconds(300), "measured \(monitor.maximumLag)")
        #expect(monitor.maximumOwnLag >= .milliseconds(300), "a blocked loop is not waiting for a core: \(monitor.maximumOwnLag)")
        #expect(recorded.loops == [0])
        // Every warning is a lag over the threshold (100 ms); the stall's is among them.
        let warnings = handler.entries.filter { $0.level == .warning }
        let logged = warnings.map { Int("\($0.metadata["event_loop.lag_ms"] ?? "0")") ?? 0 }
        #expect(warnings.allSatisfy { "\($0.message)" == "Event loop stalled" })
        #expect(logged.allSatisfy { $0 >= 100 }, "\(logged)")
        #expect(logged.contains { $0 >= 300 }, "\(logged)")
        #expect(handler.entries.allSatisfy { $0.level == .warning })
    }

    @Test("A loop that computes while busy threads hold the cores: its own lag counts its work, not its waits for a core")
    func waitingForACoreIsNotOwnLag() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let monitor = EventLoopLagMonitor(group: group, interval: .milliseconds(20), logger: Logger(label: "test"))
        monitor.start()
        for _ in 0..<200 where monitor.sampleCount < 3 { try await Task.sleep(for: .milliseconds(20)) }
        // Three busy threads per core beside it: 200 ms of the loop's own work take several times as long.
        let competing = Atomic<Bool>(true)
        for _ in 0..<(3 * ProcessInfo.processInfo.activeProcessorCount) {
            Thread { while competing.load(ordering: .relaxed) {} }.start()
        }
        defer { competing.store(false, ordering: .relaxed) }
        _ = try await group.next().submit { ThreadCPUTime.spin(.milliseconds(200)) }.get()
        competing.store(false, ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(100))
        monitor.stop()
        try await group.shutdownGracefully()
        let (lag, own) = (monitor.maximumLag, monitor.maximumOwnLag)
        #expect(own >= .milliseconds(150), "the loop's own 200 ms: lag \(lag), own \(own)")
        #expect(own + .milliseconds(50) <= lag, "the wait for the core is not counted: lag \(lag), own \(own)")
    }

    @Test("The gateway exports herald_event_loop_lag_seconds, a histogram per loop, on /metrics")
    func lagIsOnMetrics() async throws {
        try await withGateway { harness, client in
            // The monitor measures every 100 ms: wait until each loop has been measured.
            for _ in 0..<100 where harness.gateway.eventLoopLag.sampleCount < 4 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let response = try await client.execute(
                HTTPClientRequest(url: "https://localhost:\(harness.ports.device)/metrics"), timeout: .seconds(30))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            #expect(text.contains("# TYPE herald_event_loop_lag_seconds histogram"), "\(text)")
            #expect(text.contains(#"herald_event_loop_lag_seconds_bucket{loop="0",le="0.25"}"#), "\(text)")
            #expect(text.contains(#"herald_event_loop_lag_seconds_count{loop="0"}"#))
        }
    }
}

/// Lags handed to the monitor's recorder.
private final class RecordedLags: Sendable {
    private let lags = Mutex<[(lag: TimeAmount, loop: Int)]>([])

    func append(_ lag: TimeAmount, _ loop: Int) { lags.withLock { $0.append((lag, loop)) } }

    var loops: Set<Int> { Set(lags.withLock { $0.map { $0.loop } }) }
}

/// Burns the calling thread's processor time.
enum ThreadCPUTime {
    /// Runs until the calling thread has used `cpuTime` more of processor time (however long that takes).
    static func spin(_ cpuTime: Duration) {
        func used() -> Duration { .nanoseconds(ThreadSchedulerTimes.ofCallingThread()?.onCore ?? 0) }
        let end = used() + cpuTime
        while used() < end {}
    }
}
