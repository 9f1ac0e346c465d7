import ArgumentParser
import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Logging
import Synchronization
import UserNotifications

extension HeraldBench {
    /// The local-notification scheduler at scale: many apps with many pending requests each.
    struct Scheduler: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Schedule apps × per-app requests, fire some on the virtual and the real clock, restart, report.",
            discussion: """
                Reports add rate, fire-time error p50/p99 on the virtual and the real clock, restart recovery time \
                and peak RSS, each beside a reference measured in the same run: raw SQLite inserts (GRDB, one \
                transaction per 1,000 rows), bare Task.sleep wake-up error, a raw scan of the pending table, and \
                the process's RSS before any request exists. Build with -c release.
                """
        )

        @Option(help: "Number of apps.") var apps = 20_000
        @Option(help: "Pending requests per app.") var perApp = 50
        @Option(help: "Requests that fire on the real clock.") var realFires = 2_000
        @Option(help: "Concurrent apps adding at once.") var concurrency = 64
        @Option(help: "Where to put the database (a fresh temporary folder by default).") var directory: String?

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let folder = URL(fileURLWithPath: directory ?? NSTemporaryDirectory())
                .appendingPathComponent("herald-bench-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let baselineRSS = Memory.residentBytes()
            let total = apps * perApp
            print("herald-bench scheduler: \(apps) apps × \(perApp) pending = \(total) requests")

            // Reference 1: raw SQLite insert rate of comparable rows.
            let referenceInsertRate = try rawInsertRate(rows: min(total, 200_000), in: folder)

            // Phase 1: add everything through the engine on a virtual clock that starts now.
            let clock = VirtualClock(now: Date())
            let start = clock.now
            let lateness = LatenessRecorder(clock: clock)
            let databaseURL = folder.appendingPathComponent("notifications.sqlite")
            var engine = try makeEngine(databaseURL, folder: folder, clock: clock, presenter: lateness, logger: logger)
            let runner = engine.start()
            let appIDs = (0..<apps).map { String(format: "com.bench.app%05d", $0) }
            for chunk in stride(from: 0, to: appIDs.count, by: 1_000) {
                let slice = appIDs[chunk..<min(chunk + 1_000, appIDs.count)]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for app in slice {
                        group.addTask { [engine] in
                            try await engine.setAuthorization(.authorized, options: [.alert, .sound, .badge], for: app)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let addStarted = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func addApp(_ index: Int) {
                    let app = appIDs[index]
                    group.addTask { [engine, perApp] in
                        var generator = SplitMix64(seed: UInt64(index))
                        for request in 0..<perApp {
                            // One request per app fires within the first ten virtual minutes; the rest in 1 h…30 d.
                            let interval =
                                request == 0
                                ? 60 + Double(generator.next() % 600_000) / 1_000
                                : 3_600 + Double(generator.next() % 2_588_400)
                            let content = UNMutableNotificationContent()
                            content.title = "Reminder \(request)"
                            content.body = "Benchmark notification \(request) of \(app)"
                            content.badge = NSNumber(value: request)
                            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: interval, repeats: false)
                            let record = try UNNotificationRequest(identifier: "r\(request)", content: content, trigger: trigger)
                                .makeRecord()
                            try await engine.add(record, for: app)
                        }
                    }
                }
                while next < min(concurrency, appIDs.count) { addApp(next); next += 1 }
                while try await group.next() != nil {
                    if next < appIDs.count { addApp(next); next += 1 }
                }
            }
            let addSeconds = (ContinuousClock.now - addStarted).timeInterval
            let addRate = Double(total) / addSeconds
            let afterAddRSS = Memory.residentBytes()

            // Phase 2: the virtual clock steps through the first ten minutes; every due request fires at its instant.
            let fireStarted = ContinuousClock.now
            await clock.drive(engine, to: start.addingTimeInterval(700))
            let virtualFireSeconds = (ContinuousClock.now - fireStarted).timeInterval
            let virtual = lateness.take()

            // Phase 3: "restart": a new engine on the same file with the real clock; time until it is scheduling.
            runner.cancel()
            _ = await runner.value
            engine = try makeEngine(databaseURL, folder: folder, clock: SystemClock(), presenter: lateness, logger: logger)
            let recoveryStarted = ContinuousClock.now
            let realRunner = engine.start()
            await engine.activity.waitUntilIdle(now: { Date() })
            let recoverySeconds = (ContinuousClock.now - recoveryStarted).timeInterval
            let referenceScanSeconds = try rawScanSeconds(databaseURL)

            // Phase 4: real-clock fires, 1…10 s out, among all the pending requests.
            lateness.useWallClock()
            var generator = SplitMix64(seed: 99)
            for index in 0..<realFires {
                let app = appIDs[index % appIDs.count]
                let content = UNMutableNotificationContent()
                content.title = "Real clock \(index)"
                let interval = 1 + Double(generator.next() % 9_000) / 1_000
                let record = try UNNotificationRequest(
                    identifier: "real\(index)", content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: interval, repeats: false)
                ).makeRecord()
                try await engine.add(record, for: app)
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while lateness.count < realFires, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            let real = lateness.take()
            realRunner.cancel()
            let referenceSleep = await sleepLateness(count: realFires)
            let peakRSS = Memory.peakResidentBytes()

            func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }
            print("")
            print("| measure | Herald | reference (same run) | ratio |")
            print("|---|---|---|---|")
            print(
                String(
                    format: "| add rate (%d requests, %d apps concurrently) | %.0f /s | %.0f rows/s raw SQLite insert | %.2f× |",
                    total, concurrency, addRate, referenceInsertRate, addRate / referenceInsertRate))
            print(
                "| fire error, virtual clock (\(virtual.count) fires) | p50 \(ms(virtual.p50)), p99 \(ms(virtual.p99)) | 0 (exact instant) | — |"
            )
            print(
                String(
                    format: "| virtual-clock firing throughput | %.0f fires/s | — | — |",
                    Double(virtual.count) / virtualFireSeconds))
            print(
                "| fire error, real clock (\(real.count)/\(realFires) fires among \(total) pending) | p50 \(ms(real.p50)), p99 \(ms(real.p99)) | Task.sleep p50 \(ms(referenceSleep.p50)), p99 \(ms(referenceSleep.p99)) | p99 \(String(format: "%.1f×", real.p99 / max(referenceSleep.p99, 1e-6))) |"
            )
            print(
                "| restart recovery (\(total) pending) | \(ms(recoverySeconds)) | raw scan of pending \(ms(referenceScanSeconds)) | \(String(format: "%.1f×", recoverySeconds / referenceScanSeconds)) |"
            )
            print("| peak RSS | \(mb(peakRSS)) | \(mb(baselineRSS)) before any request | +\(mb(peakRSS - baselineRSS)) |")
            print("| RSS after adding \(total) | \(mb(afterAddRSS)) | \(mb(baselineRSS)) | +\(mb(afterAddRSS - baselineRSS)) |")
        }

        private func makeEngine(
            _ url: URL, folder: URL, clock: any HeraldClock, presenter: any NotificationPresenter, logger: Logger
        ) throws -> NotificationEngine {
            var configuration = NotificationEngine.Configuration(
                clock: clock, timeZone: TimeZone(identifier: "UTC")!, presenter: presenter,
                attachmentDirectory: folder.appendingPathComponent("attachments"), logger: logger, scope: nil
            )
            configuration.externalChangePollInterval = nil
            return NotificationEngine(store: try SQLiteNotificationStore(url: url, logger: logger), configuration: configuration)
        }

        /// Reference: inserting comparable rows straight into SQLite, 1,000 per transaction, same durability settings.
        private func rawInsertRate(rows: Int, in folder: URL) throws -> Double {
            var configuration = Configuration()
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let pool = try DatabasePool(
                path: folder.appendingPathComponent("reference.sqlite").path, configuration: configuration)
            try pool.write { db in
                try db.execute(
                    sql:
                        "CREATE TABLE pending (seq INTEGER PRIMARY KEY, app INTEGER, identifier TEXT, request BLOB, next_fire REAL, UNIQUE(app, identifier))"
                )
            }
            let payload = Data(repeating: 0x61, count: 420)
            let started = ContinuousClock.now
            for batch in stride(from: 0, to: rows, by: 1_000) {
                try pool.write { db in
                    for row in batch..<min(batch + 1_000, rows) {
                        try db.execute(
                            sql: "INSERT INTO pending (app, identifier, request, next_fire) VALUES (?, ?, ?, ?)",
                            arguments: [row / 50, "r\(row % 50)", payload, Double(row)])
                    }
                }
            }
            return Double(rows) / (ContinuousClock.now - started).timeInterval
        }

        private func rawScanSeconds(_ url: URL) throws -> Double {
            let queue = try DatabaseQueue(path: url.path)
            let started = ContinuousClock.now
            try queue.read { db in
                let cursor = try Row.fetchCursor(db, sql: "SELECT seq, next_fire FROM pending")
                var sum = 0.0
                while let row = try cursor.next() { sum += row[1] as Double? ?? 0 }
                _ = sum
            }
            return (ContinuousClock.now - started).timeInterval
        }

        /// Reference: how late a bare `Task.sleep` wakes, for the same spread of deadlines.
        private func sleepLateness(count: Int) async -> Percentiles {
            var generator = SplitMix64(seed: 7)
            let deadlines = (0..<count).map { _ in Date().addingTimeInterval(1 + Double(generator.next() % 9_000) / 1_000) }
            let samples = await withTaskGroup(of: Double.self) { group in
                for deadline in deadlines {
                    group.addTask {
                        try? await Task.sleep(nanoseconds: UInt64(max(0, deadline.timeIntervalSinceNow) * 1_000_000_000))
                        return Date().timeIntervalSince(deadline)
                    }
                }
                var samples: [Double] = []
                for await sample in group { samples.append(sample) }
                return samples
            }
            return Percentiles(samples)
        }
    }
}

/// Records how late each notification was presented: by the virtual clock, or by the wall clock.
private final class LatenessRecorder: NotificationPresenter {
    private let clock: VirtualClock
    private let state = Mutex<(wall: Bool, samples: [Double])>((false, []))

    init(clock: VirtualClock) {
        self.clock = clock
    }

    func useWallClock() {
        state.withLock { $0.wall = true }
    }

    func present(_ presentation: NotificationPresentation) async {
        state.withLock { state in
            let now = state.wall ? Date() : clock.now
            state.samples.append(now.timeIntervalSince(presentation.date))
        }
    }

    var count: Int { state.withLock { $0.samples.count } }

    func take() -> Percentiles {
        Percentiles(
            state.withLock { state in
                defer { state.samples = [] }
                return state.samples
            })
    }
}
