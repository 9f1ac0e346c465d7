import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing

@testable import HeraldDevice
@testable import HeraldNotificationEngine

/// What the host promises whatever an extension process does (B-51, B-52, issue 63): one outcome per push — the best
/// attempt when one arrives in time, else nothing (the push then shows as it came) — and a process that took a
/// request's expiry applies it to that request only.
@Suite(.heavy, .timeLimit(.minutes(2))) struct ServiceExtensionProcessTests {
    static let exampleService = ServiceExtensionTests.exampleService

    static func request(_ test: String?, title: String = "T") -> NotificationRequestRecord {
        var content = NotificationContentRecord()
        content.title = title
        content.body = "B"
        if let test {
            content.userInfo = try! PropertyListSerialization.data(
                fromPropertyList: ["test": test], format: .binary, options: 0)
        }
        return NotificationRequestRecord(identifier: UUID().uuidString, content: content, trigger: .push)
    }

    static func host(
        timeLimit: Duration, grace: Duration, clock: any HeraldClock = SystemClock(), warm: Bool
    )
        -> ServiceExtensionHost
    {
        var logger = Logger(label: "test.extension")
        logger.logLevel = .critical
        return ServiceExtensionHost(timeLimit: timeLimit, grace: grace, clock: clock, keepsWarm: warm, logger: logger)
    }

    static let manifest = ServiceExtensionHost.Manifest(
        bundle: FileManager.default.temporaryDirectory, executable: exampleService)

    /// The cause of the B-51 failure: the extension said it was ready before its SIGUSR1 handler existed (libdispatch
    /// installs it only when the main queue first runs), so an expiry that came at once was ignored and its best
    /// attempt never came. A time limit of zero sends the signal the moment the host reads "ready".
    @Test(
        "B-51: an expiry that comes the moment the extension is ready (before it has the request) still gets its best attempt",
        arguments: [true, false])
    func expiryAtReady(warm: Bool) async throws {
        for round in 0..<5 {
            let host = Self.host(timeLimit: .zero, grace: .seconds(15), warm: warm)
            let content = await host.modify(
                Self.request("never", title: "R\(round)"), with: Self.manifest, for: "com.example.expiry")
            #expect(content?.title == "R\(round) [NotificationService]", "round \(round), warm \(warm)")
            await host.stopWarmProcesses()
        }
    }

    /// An executable that runs the example extension after `delay` seconds (a process slow to start), or never
    /// becomes one (`delay` nil: it sleeps until killed).
    static func slowStarter(delay: Double?) throws -> ServiceExtensionHost.Manifest {
        let script = try ScratchFolder.make("slow-extension").appendingPathComponent("extension.sh")
        let body =
            delay.map { "#!/bin/sh\nsleep \($0)\nexec \"\(exampleService.path)\"\n" } ?? "#!/bin/sh\nexec sleep 1000\n"
        try Data(body.utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return ServiceExtensionHost.Manifest(bundle: script.deletingLastPathComponent(), executable: script)
    }

    @Test("B-51: a process slow to start gets its expiry once it is ready, and gives its best attempt", arguments: [true, false])
    func slowToStart(warm: Bool) async throws {
        let host = Self.host(timeLimit: .zero, grace: .seconds(30), warm: warm)
        let content = await host.modify(Self.request("never"), with: try Self.slowStarter(delay: 1), for: "com.example.slow")
        #expect(content?.title == "T [NotificationService]")
        await host.stopWarmProcesses()
    }

    @Test("B-52: a process that never becomes ready is killed at the end of its grace; no content (the push shows as it came)")
    func neverReady() async throws {
        let host = Self.host(timeLimit: .milliseconds(200), grace: .milliseconds(500), warm: true)
        let content = await host.modify(Self.request(nil), with: try Self.slowStarter(delay: nil), for: "com.example.stuck")
        #expect(content == nil)
        #expect(await host.warmProcessCount == 0, "a process that failed a request is not kept")
    }

    @Test(
        "B-52: an extension that hangs past its expiry is killed at the end of its grace; no content", arguments: [true, false])
    func hangs(warm: Bool) async throws {
        let host = Self.host(timeLimit: .milliseconds(200), grace: .milliseconds(500), warm: warm)
        #expect(await host.modify(Self.request("hang"), with: Self.manifest, for: "com.example.hang") == nil)
        await host.stopWarmProcesses()
    }

    @Test("An extension that crashes gives no content at once, not at its deadline (the injected clock never moves)")
    func crashes() async throws {
        let clock = VirtualClock()
        for warm in [true, false] {
            let host = Self.host(timeLimit: .seconds(30), grace: .seconds(5), clock: clock, warm: warm)
            #expect(await host.modify(Self.request("crash"), with: Self.manifest, for: "com.example.crash") == nil)
            await host.stopWarmProcesses()
        }
    }

    @Test(
        "An extension that calls its handler twice: the first content is its answer, and the next push on the same warm process gets its own"
    )
    func answersTwice() async throws {
        let host = Self.host(timeLimit: .seconds(30), grace: .seconds(5), warm: true)
        let first = await host.modify(Self.request("twice", title: "One"), with: Self.manifest, for: "com.example.twice")
        #expect(first?.title == "One [NotificationService]")
        #expect(await host.warmProcessCount == 1)
        let second = await host.modify(Self.request(nil, title: "Two"), with: Self.manifest, for: "com.example.twice")
        #expect(second?.title == "Two [NotificationService]")
        await host.stopWarmProcesses()
    }

    @Test(
        "B-51: an expiry for a request already answered (its deadline came as it answered) does not end the next request early"
    )
    func lateExpiryIsForItsOwnRequest() async throws {
        let clock = VirtualClock()
        let process = WarmExtensionProcess(executable: Self.exampleService)
        defer { process.stop() }
        let encoder = JSONEncoder()
        let first = await process.ask(
            try encoder.encode(Self.request(nil, title: "One")), timeLimit: .seconds(30), grace: .seconds(5), clock: clock)
        #expect(first.map { String(decoding: $0, as: UTF8.self) }?.contains("One [NotificationService]") == true)
        // The first request's deadline, late: as the host sends it, with the request's number.
        let pid = try #require(await process.processID())
        #expect(sigqueue(pid, SIGUSR1, sigval(sival_int: 1)) == 0)
        let start = clock.now
        let request = try encoder.encode(Self.request("never", title: "Two"))
        let answered = ReadyFlag()
        let second = Task {
            defer { answered.set() }
            return await process.ask(request, timeLimit: .seconds(30), grace: .seconds(5), clock: clock)
        }
        #expect(await clock.waitForSleeper(until: start.addingTimeInterval(30), timeout: .seconds(20)))
        // The late signal has had its time to arrive (before the fix it ended this request at once).
        try await Task.sleep(for: .seconds(2))
        #expect(!answered.isSet, "the second request was answered before its time")
        clock.advance(by: 30)
        let answer = await second.value
        #expect(answer.map { String(decoding: $0, as: UTF8.self) }?.contains("Two [NotificationService]") == true)
    }
}
