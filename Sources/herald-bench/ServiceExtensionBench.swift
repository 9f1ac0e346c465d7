import ArgumentParser
import Foundation
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import Logging
import Subprocess
import SystemPackage
import UserNotifications

extension HeraldBench {
    /// What a notification service extension costs a push: from launching it to its content handler's answer.
    struct ServiceExtension: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extension",
            abstract: "Time a notification service extension per push: launch → didReceive → content handler → answer.",
            discussion: """
                Runs herald-example-service (seed 003's title rewrite), built beside this benchmark, through the device's \
                extension host for --pushes pushes, one after another, and reports p50/p99 of the whole round (write \
                the request, start the process, its answer read back). The reference in the same run is starting and \
                waiting for /bin/true through the same process library: what any process launch costs here. Both ways \
                are timed: cold (a process per push) and warm (one process kept, a request per push, as the device does \
                by default). Build with -c release.
                """)

        @Option(help: "Pushes to time.") var pushes = 200
        @Option(help: "The extension executable.")
        var executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("herald-example-service").path

        func validate() throws {
            try requireExecutable(
                executable, option: "executable", package: "herald (swift build --product herald-example-service)")
            guard pushes > 0 else { throw ValidationError("--pushes must be positive.") }
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let cold = ServiceExtensionHost(timeLimit: .seconds(30), grace: .seconds(5), keepsWarm: false, logger: logger)
            let warm = ServiceExtensionHost(timeLimit: .seconds(30), grace: .seconds(5), keepsWarm: true, logger: logger)
            let manifest = ServiceExtensionHost.Manifest(
                bundle: URL(fileURLWithPath: NSTemporaryDirectory()), executable: URL(fileURLWithPath: executable))
            var content = NotificationContentRecord()
            content.title = "Benchmark"
            content.body = "A push for the extension"
            let request = NotificationRequestRecord(identifier: "bench", content: content, trigger: .push)
            let clock = ContinuousClock()

            var failures = 0
            func time(_ host: ServiceExtensionHost) async -> [Double] {
                // Warm the file system cache and the process library (and, for a warm host, its process).
                for _ in 0..<5 { _ = await host.modify(request, with: manifest, for: "com.example.bench") }
                var rounds: [Double] = []
                for _ in 0..<pushes {
                    let start = clock.now
                    let answer = await host.modify(request, with: manifest, for: "com.example.bench")
                    rounds.append((clock.now - start).seconds)
                    if answer?.title != "Benchmark [NotificationService]" { failures += 1 }
                }
                return rounds
            }
            let rounds = await time(cold)
            let warmRounds = await time(warm)
            let warmProcesses = await warm.warmProcessCount
            await warm.stopWarmProcesses()
            var launches: [Double] = []
            for _ in 0..<pushes {
                let start = clock.now
                _ = try await Subprocess.run(.path(FilePath("/bin/true")), output: .discarded, error: .discarded)
                launches.append((clock.now - start).seconds)
            }
            let extensionTimes = Percentiles(rounds)
            let warmTimes = Percentiles(warmRounds)
            let reference = Percentiles(launches)
            func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }
            print(
                """
                herald-bench extension: \(pushes) pushes through \(executable)

                | per push | p50 | p99 |
                |---|---|---|
                | service extension, cold (launch → content handler → answer) | \(ms(extensionTimes.p50)) | \(ms(extensionTimes.p99)) |
                | service extension, warm (request → content handler → answer) | \(ms(warmTimes.p50)) | \(ms(warmTimes.p99)) |
                | reference: start and wait for /bin/true | \(ms(reference.p50)) | \(ms(reference.p99)) |
                | cold / reference | \(String(format: "%.1f×", extensionTimes.p50 / reference.p50)) | \(String(format: "%.1f×", extensionTimes.p99 / reference.p99)) |
                | warm / reference | \(String(format: "%.2f×", warmTimes.p50 / reference.p50)) | \(String(format: "%.2f×", warmTimes.p99 / reference.p99)) |

                answers that were not the extension's rewrite: \(failures); warm processes kept: \(warmProcesses)
                """)
        }
    }
}
