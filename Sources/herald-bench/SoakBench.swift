import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import Synchronization
import UserNotifications

extension HeraldBench {
    /// The crash-soak: a gateway and a device daemon as processes under continuous pushes (some with collapse ids) and
    /// local notifications, each killed with `kill -9` at random moments and restarted; then every push answered 200
    /// and every local notification whose `add` returned is accounted for.
    struct Soak: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "soak",
            abstract: "kill -9 the gateway and the device daemon at random under continuous pushes; account for every one.",
            discussion: """
                `herald gateway` and `herald device` run as processes on their own data directories. HeraldProvider \
                sends pushes (every fifth with an apns-collapse-id) at --rate a second, retrying through the outages with \
                the same apns-id; `herald notifications send` adds a local notification every second. --kills times, \
                the gateway or the daemon (at random, --seed) is killed with SIGKILL at a random moment and restarted \
                after a random offline period. At the end: every push answered 200 is shown exactly once, or was \
                replaced by a later one while stored (one per device and topic, D-04); every local notification whose \
                add returned fires once. With --device-model iphone the daemon applies an iPhone's delivery rules, \
                every third push is priority 5, and the device's power goes low and back at random, so pushes the \
                device holds go through the kills too; the power is back to normal before the count. The last line: `kills: N, accepted: A, shown: S, replaced: R, lost: L, \
                duplicated: D` (exit 1 unless lost and duplicated are 0).
                """)

        @Option(help: "How many times a process is killed.") var kills = 10
        @Option(help: "Pushes a second.") var rate = 40
        @Option(help: "The longest time between two kills, in seconds (each is random, from a second up).") var interval = 5.0
        @Option(help: "The random seed (default: from the clock; printed).") var seed: UInt64?
        @Option(help: "Where the data directories go (default: a temporary folder).") var directory: String?
        @Flag(help: "Keep the data directories and logs.") var keep = false
        @Option(
            help:
                "The device's delivery rules: instant, or iphone (then every third push is priority 5, the device's power goes low and back at random, and the device makes its own choices from --seed: held pushes go through the kills too)."
        )
        var deviceModel = "instant"

        static let bundleID = "com.example.soak"
        static let keyID = "SOAKKEY001"
        static let teamID = "SOAKTEAM01"

        func validate() throws {
            guard kills >= 1, rate >= 1, interval >= 1 else {
                throw ValidationError("--kills and --rate must be at least 1, --interval at least 1 second.")
            }
            guard ["instant", "iphone"].contains(deviceModel) else {
                throw ValidationError("--device-model takes instant or iphone.")
            }
        }

        func run() async throws {
            let seed = self.seed ?? UInt64(Date().timeIntervalSince1970 * 1000)
            var random = SplitMix64(seed: seed)
            let folder = URL(fileURLWithPath: directory ?? NSTemporaryDirectory())
                .appendingPathComponent("herald-soak-\(UUID().uuidString)", isDirectory: true)
            let iphone = deviceModel == "iphone"
            // The device's own choices (two or three background pushes an hour, the burst's delay) from the soak's seed.
            let plant = try SoakPlant(folder: folder, deviceModel: deviceModel, deviceSeed: iphone ? seed : nil)
            print(
                "soak: seed \(seed), \(kills) kills, \(rate) pushes/s, device model \(deviceModel), data in \(folder.path)")
            defer { if !keep { try? FileManager.default.removeItem(at: folder) } }

            // Every process the plant started is stopped on every path (a step that fails leaves none behind).
            do {
                try await plant.prepare()
                try await plant.startGateway()
                let token = try await plant.startDevice(registering: true)
                try await plant.startApp()
                let tally = SoakTally()
                let provider = try plant.makeProvider()
                let pusher = Task {
                    await Self.push(with: provider, to: token, rate: rate, throttlingEvery: iphone ? 3 : nil, tally: tally)
                }
                let adder = Task { await Self.addLocal(plant, tally: tally) }
                let power = Task { if iphone { await Self.togglePower(plant, seed: seed &+ 1, tally: tally) } }

                var done = 0
                do {
                    while done < kills {
                        try await Task.sleep(for: .milliseconds(Int.random(in: 1_000...Int(interval * 1_000), using: &random)))
                        let gateway = Bool.random(using: &random)
                        let offline = Duration.milliseconds(Int.random(in: 200...2_000, using: &random))
                        if gateway {
                            tally.gatewayKills.withLock { $0.append(Date()) }
                            await plant.killGateway()
                            try await Task.sleep(for: offline)
                            try await plant.startGateway()
                        } else {
                            await plant.killDevice()
                            try await Task.sleep(for: offline)
                            _ = try await plant.startDevice(registering: false)
                        }
                        done += 1
                        print("kill \(done)/\(kills): \(gateway ? "gateway" : "device daemon"), back after \(offline)")
                    }
                } catch {
                    tally.running.store(false, ordering: .relaxed)
                    await pusher.value
                    await adder.value
                    await power.value
                    try? await provider.shutdown()
                    await plant.stopAll()
                    throw error
                }
                tally.running.store(false, ordering: .relaxed)
                await pusher.value
                await adder.value
                await power.value
                try await provider.shutdown()
                // What the device's power held comes in once it is back to normal.
                if iphone { try await plant.restorePower(timeout: .seconds(60)) }

                let report = try await plant.settle(tally: tally, timeout: .seconds(90))
                await plant.stopAll()
                if keep { plant.saveOutputs() }
                print(report.detail)
                print(
                    "kills: \(kills), accepted: \(report.accepted), shown: \(report.shown), replaced: \(report.replaced), "
                        + "lost: \(report.lost), duplicated: \(report.duplicated)")
                if report.lost > 0 || report.duplicated > 0 { throw ExitCode(1) }
            } catch {
                await plant.stopAll()
                throw error
            }
        }

        /// Sends pushes at `rate` until told to stop, each retried through outages with its own apns-id.
        static func push(
            with provider: APNsClient, to token: String, rate: Int, throttlingEvery: Int? = nil, tally: SoakTally
        ) async {
            await withTaskGroup(of: Void.self) { group in
                var number = 0
                let clock = ContinuousClock()
                let start = clock.now
                while tally.running.load(ordering: .relaxed) {
                    let due = start + .milliseconds(number * 1_000 / rate)
                    if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
                    let pushNumber = number
                    number += 1
                    var notification = APNsNotification.alert(
                        bundleID: bundleID, payload: APNsPayload(alert: .fields(.init(title: "S-\(pushNumber)", body: "soak"))))
                    if pushNumber % 5 == 0 { notification.collapseID = "c-\(pushNumber % 3)" }
                    if let throttlingEvery, pushNumber % throttlingEvery == 1 { notification.priority = .throttled }
                    tally.sent(pushNumber, collapseID: notification.collapseID)
                    group.addTask {
                        let result = try? await provider.send(notification, to: token)
                        tally.answered(pushNumber, status: result?.status ?? 0, uniqueID: result?.uniqueID)
                    }
                }
            }
        }

        /// Turns the device's power low and back to normal (`herald device power`) every one to three seconds (at random,
        /// from `seed`) until told to stop; a command that finds no device (it was killed) is skipped.
        static func togglePower(_ plant: SoakPlant, seed: UInt64, tally: SoakTally) async {
            var random = SplitMix64(seed: seed)
            var low = false
            while tally.running.load(ordering: .relaxed) {
                try? await Task.sleep(for: .milliseconds(Int.random(in: 1_000...3_000, using: &random)))
                low.toggle()
                _ = try? await plant.herald(["device", "power", low ? "low" : "normal"], in: plant.deviceDirectory)
            }
        }

        /// Adds a local notification (due in a second) through `herald notifications send` every second.
        static func addLocal(_ plant: SoakPlant, tally: SoakTally) async {
            var number = 0
            while tally.running.load(ordering: .relaxed) {
                let title = "L-\(number)"
                if let result = try? await plant.herald(
                    ["notifications", "send", bundleID, "--title", title, "--body", "local", "--identifier", title, "--in", "1"],
                    in: plant.deviceDirectory), result.status == 0
                {
                    tally.added.withLock { _ = $0.insert(number) }
                }
                number += 1
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}

/// What the soak sent and what came back.
final class SoakTally: Sendable {
    struct Push: Sendable {
        var collapseID: String?
        var status = -1
        var uniqueID: String?
        var answeredAt: Date?
    }

    let pushes = Mutex<[Int: Push]>([:])
    let added = Mutex<Set<Int>>([])
    let gatewayKills = Mutex<[Date]>([])
    /// Whether pushes and local notifications are still being sent.
    let running = Atomic<Bool>(true)

    func sent(_ number: Int, collapseID: String?) {
        pushes.withLock { $0[number] = Push(collapseID: collapseID) }
    }

    func answered(_ number: Int, status: Int, uniqueID: String?) {
        pushes.withLock {
            $0[number]?.status = status
            $0[number]?.uniqueID = uniqueID
            $0[number]?.answeredAt = Date()
        }
    }
}

/// The soak's processes and data directories.
final class SoakPlant: Sendable {
    let folder: URL
    let gatewayDirectory: URL
    let deviceDirectory: URL
    let executable: URL
    let ports: (provider: Int, device: Int)
    private let processes = Mutex<(gateway: ChildProcess?, device: ChildProcess?, all: [ChildProcess])>((nil, nil, []))
    /// A reader of the device's store (it fires nothing: no app is in its scope).
    let deviceEngine: NotificationEngine

    /// The device's delivery rules (`--device-model`).
    let deviceModel: String
    /// The seed of the device's choices under the iPhone rules (`--seed`), if any.
    let deviceSeed: UInt64?

    init(folder: URL, deviceModel: String = "instant", deviceSeed: UInt64? = nil) throws {
        self.folder = folder
        self.deviceModel = deviceModel
        self.deviceSeed = deviceSeed
        gatewayDirectory = folder.appendingPathComponent("gateway", isDirectory: true)
        deviceDirectory = folder.appendingPathComponent("device", isDirectory: true)
        guard let bench = Bundle.main.executableURL else { throw ValidationError("Cannot tell where herald-bench is.") }
        executable = bench.deletingLastPathComponent().appendingPathComponent("herald")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ValidationError(
                "\(executable.path) is missing: build it with `swift build -c release --product herald` (scripts/bench does).")
        }
        ports = (try freeLoopbackPort(), try freeLoopbackPort())
        for directory in [gatewayDirectory, deviceDirectory] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        var logger = Logger(label: "herald.soak.reader")
        logger.logLevel = .error
        deviceEngine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: deviceDirectory), presenter: SilentPresenter(), scope: [], logger: logger)
    }

    var keyFile: URL { folder.appendingPathComponent("key.p8") }

    /// Runs `herald arguments --data-dir directory` to its end (a minute at most).
    func herald(_ arguments: [String], in directory: URL) async throws -> ChildProcess.Result {
        try await ChildProcess.run(executable.path, arguments + ["--data-dir", directory.path], timeout: .seconds(60))
    }

    /// The provider key, and the app allowed to show notifications.
    func prepare() async throws {
        let key = try await herald(
            ["keys", "create", "--team-id", HeraldBench.Soak.teamID, "--key-id", HeraldBench.Soak.keyID, "--out", keyFile.path],
            in: gatewayDirectory)
        guard key.status == 0 else { throw ValidationError("herald keys create failed: \(key.error)") }
        let allowed = try await herald(["settings", HeraldBench.Soak.bundleID, "--allow"], in: deviceDirectory)
        guard allowed.status == 0 else { throw ValidationError("herald settings failed: \(allowed.error)") }
    }

    func startGateway() async throws {
        let gateway = try await ChildProcess.launch(
            executable.path,
            [
                "gateway", "--data-dir", gatewayDirectory.path, "--port", String(ports.provider), "--plaintext-port", "-1",
                "--device-port", String(ports.device),
            ])
        processes.withLock {
            $0.gateway = gateway
            $0.all.append(gateway)
        }
        guard await gateway.waitForOutput(containing: "trust this CA", timeout: .seconds(60)) != nil else {
            throw ValidationError("herald gateway did not start: \(gateway.error)")
        }
    }

    /// Starts the device daemon; the first time it registers the app and returns its token.
    @discardableResult
    func startDevice(registering: Bool) async throws -> String {
        var arguments = [
            "device", "--data-dir", deviceDirectory.path, "--gateway", "wss://localhost:\(ports.device)/device/v1",
            "--cacert", gatewayDirectory.appendingPathComponent("tls/ca.pem").path,
        ]
        if registering { arguments += ["--register", HeraldBench.Soak.bundleID] }
        arguments += ["--device-model", deviceModel]
        if let deviceSeed { arguments += ["--seed", String(deviceSeed)] }
        let device = try await ChildProcess.launch(executable.path, arguments)
        processes.withLock {
            $0.device = device
            $0.all.append(device)
        }
        guard registering else { return "" }
        guard let line = await device.waitForOutput(containing: HeraldBench.Soak.bundleID + " ", timeout: .seconds(60)),
            let token = line.split(separator: " ").last.map(String.init), DeviceToken(hex: token) != nil
        else { throw ValidationError("herald device did not register the app: \(device.error)") }
        return token
    }

    /// Starts seeds 001/003's app (`herald-example-app`) as the soak's app, linked to the daemon while one runs.
    func startApp() async throws {
        let app = try await ChildProcess.launch(
            executable.deletingLastPathComponent().appendingPathComponent("herald-example-app").path, [],
            environment: ProcessInfo.processInfo.environment.merging(
                ["HERALD_DATA_DIR": deviceDirectory.path, "HERALD_BUNDLE_ID": HeraldBench.Soak.bundleID]) { $1 })
        processes.withLock { $0.all.append(app) }
        guard await app.waitForOutput(containing: "APNs device token: ", timeout: .seconds(60)) != nil else {
            throw ValidationError("herald-example-app did not register: \(app.output) \(app.error)")
        }
    }

    func makeProvider() throws -> APNsClient {
        let signer = try ProviderTokenSigner(
            pem: String(contentsOf: keyFile, encoding: .utf8), keyID: HeraldBench.Soak.keyID, teamID: HeraldBench.Soak.teamID)
        var logger = Logger(label: "herald.soak.provider")
        logger.logLevel = .critical
        return try APNsClient(
            server: APNsServer(
                url: URL(string: "https://localhost:\(ports.provider)")!,
                certificateAuthorityFile: gatewayDirectory.appendingPathComponent("tls/ca.pem").path),
            authentication: .token(signer),
            retryPolicy: APNsRetryPolicy(maximumAttempts: 60, initialDelay: .milliseconds(200), maximumDelay: .seconds(1)),
            logger: logger)
    }

    /// Sets the device's power back to normal, retrying while the device is not up yet.
    func restorePower(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let result = try? await herald(["device", "power", "normal"], in: deviceDirectory)
            if result?.status == 0 { return }
            guard ContinuousClock.now < deadline else {
                throw ValidationError("herald device power normal did not reach the device: \(result?.error ?? "")")
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    func killGateway() async {
        guard let gateway = processes.withLock({ $0.gateway }) else { return }
        gateway.send(SIGKILL)
        _ = await gateway.wait(timeout: .seconds(10))
    }

    func killDevice() async {
        guard let device = processes.withLock({ $0.device }) else { return }
        device.send(SIGKILL)
        _ = await device.wait(timeout: .seconds(10))
    }

    /// Writes every process's output to `<folder>/process-N.log` (for `--keep`).
    func saveOutputs() {
        let outputs = processes.withLock { $0.all.map { $0.output + "\n--- standard error ---\n" + $0.error } }
        for (index, output) in outputs.enumerated() {
            try? Data(output.utf8).write(to: folder.appendingPathComponent("process-\(index).log"))
        }
    }

    func stopAll() async {
        let running = processes.withLock { state in
            state.all.filter { process in process !== state.gateway && process !== state.device }
                + [state.device, state.gateway].compactMap { $0 }
        }
        for process in running { _ = await process.stop() }
    }

    /// What the soak found, once every accepted push and added notification is accounted for (or `timeout` passed).
    struct Report {
        var accepted = 0
        var shown = 0
        var replaced = 0
        var lost = 0
        var duplicated = 0
        var detail = ""
    }

    /// Waits (bounded) until everything accepted is shown or replaced, then counts.
    func settle(tally: SoakTally, timeout: Duration) async throws -> Report {
        let deadline = ContinuousClock.now + timeout
        while true {
            let report = try await account(tally: tally)
            if report.lost == 0 || ContinuousClock.now >= deadline { return report }
            try await Task.sleep(for: .seconds(1))
        }
    }

    /// How many times each title was presented: the terminal lines of every device daemon that ran (on its standard
    /// output), and of the app while it ran alone (its own engine presents then, on its standard error: a collapsed
    /// push it showed is later replaced in the delivered list, so its line is the only trace).
    private func presentations() -> [String: Int] {
        var counts: [String: Int] = [:]
        let outputs = processes.withLock { $0.all.flatMap { [$0.output, $0.error] } }
        for output in outputs {
            for line in output.split(separator: "\n") {
                guard let range = line.range(of: HeraldBench.Soak.bundleID + "  ") else { continue }
                let title = line[range.upperBound...].prefix { $0 != ":" && $0 != " " }
                counts[String(title), default: 0] += 1
            }
        }
        return counts
    }

    private func account(tally: SoakTally) async throws -> Report {
        let pushes = tally.pushes.withLock { $0 }
        let added = tally.added.withLock { $0 }
        let kills = tally.gatewayKills.withLock { $0 }
        let presented = presentations()
        // In the app's delivered list: shown, even when the process that presented it was killed before its terminal
        // line (the list is committed first, so a kill never shows one twice).
        let delivered = try await Set(deviceEngine.delivered(for: HeraldBench.Soak.bundleID).map(\.request.content.title))
        let store = try SQLiteGatewayStore(url: gatewayDirectory.appendingPathComponent("gateway.sqlite"))
        var report = Report()
        var inferred = 0
        var lostNumbers: [Int] = []
        var lostDetails: [String] = []
        let accepted = pushes.filter { $0.value.status == 200 }
        let latestAnswer = accepted.values.compactMap(\.answeredAt).max()
        report.accepted = accepted.count
        for (number, push) in accepted {
            let count = presented["S-\(number)", default: 0]
            if count > 1 { report.duplicated += 1 }
            if count >= 1 || delivered.contains("S-\(number)") {
                report.shown += 1
                continue
            }
            let events = try await store.events(uniqueID: push.uniqueID ?? "")
            if events.contains(where: { $0.detail.hasPrefix("Discarded - Replaced") }) {
                report.replaced += 1
                continue
            }
            // A replacement whose log line the gateway had not written when it was killed (README: the delivery log
            // after a crash): a later push was accepted after it, and the gateway was killed within 2 s of it.
            if let at = push.answeredAt, let latestAnswer, latestAnswer > at,
                kills.contains(where: { $0 >= at.addingTimeInterval(-1) && $0 <= at.addingTimeInterval(2) })
            {
                report.replaced += 1
                inferred += 1
                continue
            }
            report.lost += 1
            lostNumbers.append(number)
            if lostDetails.count < 10 {
                lostDetails.append(
                    "S-\(number) (\(push.uniqueID ?? "?")): "
                        + events.map { "\($0.detail.prefix(60))" }.joined(separator: " → "))
            }
        }
        var localFired = 0
        var localDuplicated = 0
        var localLost: [Int] = []
        for number in added {
            let count = presented["L-\(number)", default: 0]
            if count > 1 {
                localDuplicated += 1
            } else if count == 1 || delivered.contains("L-\(number)") {
                localFired += 1
            } else {
                localLost.append(number)
            }
        }
        report.lost += localLost.count
        report.duplicated += localDuplicated
        let unanswered = pushes.values.filter { $0.status != 200 }.count
        report.detail = """
            pushes: sent \(pushes.count), accepted \(report.accepted), not accepted \(unanswered) (still failing when the \
            retries ran out); replaced while stored: \(report.replaced) (\(inferred) inferred: log lines lost with a killed gateway)
            local notifications: added \(added.count), fired once \(localFired), twice or more \(localDuplicated), not fired \(localLost.count)
            lost pushes: \(lostNumbers.sorted().prefix(20)), lost local: \(localLost.sorted().prefix(20))
            """
        for line in lostDetails { report.detail += "\n  " + line }
        return report
    }
}
