import Foundation
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing
import UserNotifications

/// Whether this process may mount a tmpfs (root, and a kernel that lets it).
func canMountSmallDisks() async -> Bool {
    guard getuid() == 0, let disk = try? await StorageFaultTests.SmallDisk(megabytes: 1) else { return false }
    await disk.remove()
    return true
}

/// Storage faults as a machine has them: a full disk, a read-only one, a damaged database. Nothing is answered 200
/// or acknowledged that is not on disk; the process keeps serving what it can, or exits saying why.
///
/// The disks are small tmpfs mounts, which needs root (CI and this project's machines run as root).
@Suite(.heavy, .timeLimit(.minutes(3)), .enabled("needs root to mount a tmpfs", { await canMountSmallDisks() }))
struct StorageFaultTests {
    /// A tmpfs of `megabytes` on a new temporary folder, unmounted by ``remove()``.
    struct SmallDisk {
        let url: URL

        init(megabytes: Int) async throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-disk-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let mounted = try await ChildProcess.run(
                "/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", url.path], timeout: .seconds(10))
            guard mounted.status == 0 else {
                try? FileManager.default.removeItem(at: url)
                throw MountError(message: mounted.error)
            }
        }

        /// Fills the disk to the last byte with a file of its own; returns the file.
        func fill() async throws -> URL {
            let filler = url.appendingPathComponent("filler")
            _ = try await ChildProcess.run("/bin/dd", ["if=/dev/zero", "of=\(filler.path)", "bs=4096"], timeout: .seconds(30))
            return filler
        }

        /// Mounts it again read-only (`true`) or read-write.
        func remount(readOnly: Bool) async throws {
            let result = try await ChildProcess.run(
                "/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", url.path], timeout: .seconds(10))
            #expect(result.status == 0, "\(result.error)")
        }

        func remove() async {
            _ = try? await ChildProcess.run("/bin/umount", ["-l", url.path], timeout: .seconds(10))
            try? FileManager.default.removeItem(at: url)
        }
    }

    struct MountError: Error { var message: String }

    /// Runs `body` with a small disk, and always unmounts it.
    func withSmallDisk(megabytes: Int, _ body: (SmallDisk) async throws -> Void) async throws {
        let disk = try await SmallDisk(megabytes: megabytes)
        do {
            try await body(disk)
        } catch {
            await disk.remove()
            throw error
        }
        await disk.remove()
    }

    @Test(
        "A full disk: the gateway answers 500 for what it cannot store, never 200; it keeps serving, and after kill -9 every push answered 200 is there"
    )
    func gatewayFullDisk() async throws {
        try await withSmallDisk(megabytes: 8) { disk in
            let herald = try HeraldProcess(dataDirectory: disk.url.appendingPathComponent("data"))
            let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
            #expect(
                try await herald.run(["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile])
                    .status == 0)
            // Offline devices, one stored push each: 150 of them hold more than the WAL's reused space.
            var tokens: [String] = []
            do {
                let store = try SQLiteGatewayStore(url: herald.dataDirectory.appendingPathComponent("gateway.sqlite"))
                for index in 0..<150 {
                    tokens.append(
                        try await store.activeToken(
                            deviceID: "device-\(index)", bundleID: "com.example.full", environment: .development, at: Date()
                        ).token)
                }
            }
            let first = try await GatewayCommandTests.GatewayProcess.start(herald)
            var gateways = [first.child]
            defer { for gateway in gateways { gateway.send(SIGKILL) } }
            let provider = try first.providerClient(keyFile: keyFile, trusting: herald, retryPolicy: .never)
            // 3.5 KB each: the store must grow to keep them.
            let filler = String(repeating: "x", count: 3_500)
            func push(_ text: String, to token: String) async throws -> Int {
                try await provider.send(
                    .alert(
                        bundleID: "com.example.full",
                        payload: APNsPayload(alert: .text(text), custom: [.init("pad", .string(filler))])),
                    to: token
                ).status
            }
            /// The last push answered 200 for each device.
            var kept: [Int: String] = [:]
            var answers: [Int] = []
            do {
                #expect(try await push("room", to: tokens[0]) == 200, "room at first")
                kept[0] = "room"
                let fill = try await disk.fill()
                for index in tokens.indices {
                    let status = try await push("full-\(index)", to: tokens[index])
                    answers.append(status)
                    if status == 200 { kept[index] = "full-\(index)" }
                    if status == 500 && answers.count(where: { $0 == 500 }) >= 3 { break }
                }
                #expect(answers.contains(500), "a full disk is answered 500 InternalServerError: \(answers)")
                #expect(answers.allSatisfy { $0 == 200 || $0 == 500 }, "\(answers)")
                // Still serving: room again, and the next push is stored.
                try FileManager.default.removeItem(at: fill)
                #expect(try await push("after", to: tokens[0]) == 200)
                kept[0] = "after"
            } catch {
                try? await provider.shutdown()
                throw error
            }
            try await provider.shutdown()

            first.child.send(SIGKILL)
            _ = await first.child.wait(timeout: .seconds(10))
            let second = try await GatewayCommandTests.GatewayProcess.start(herald, onPortsOf: first)
            gateways.append(second.child)
            // Every push answered 200 is kept for its offline device: the last one for each.
            let store = try SQLiteGatewayStore(url: herald.dataDirectory.appendingPathComponent("gateway.sqlite"))
            for (index, text) in kept {
                let stored = try await store.storedNotifications(deviceID: "device-\(index)")
                #expect(
                    stored.map { String(decoding: $0.payload, as: UTF8.self).contains(#""alert":"\#(text)""#) } == [true],
                    "device-\(index)")
            }
            #expect(await second.child.stop() == 0)
        }
    }

    @Test(
        "The device's disk full: a push the daemon cannot keep is not acknowledged and not shown; the daemon keeps running, and once there is room it is shown; after kill -9 every push is in the delivered list exactly once"
    )
    func deviceFullDisk() async throws {
        try await withSmallDisk(megabytes: 4) { disk in
            // The gateway has room; only the device's data directory is on the small disk.
            let gatewaySide = try HeraldProcess()
            let keyFile = gatewaySide.dataDirectory.appendingPathComponent("key.p8").path
            #expect(
                try await gatewaySide.run([
                    "keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile,
                ]).status == 0)
            let gateway = try await GatewayCommandTests.GatewayProcess.start(gatewaySide)
            var children = [gateway.child]
            defer { for child in children { child.send(SIGKILL) } }
            let deviceSide = try HeraldProcess(dataDirectory: disk.url.appendingPathComponent("data"))
            #expect(try await deviceSide.run(["settings", "com.example.full", "--allow"]).status == 0)
            let deviceArguments = [
                "device", "--gateway", "wss://localhost:\(gateway.device)/device/v1", "--register", "com.example.full",
                "--cacert", gatewaySide.dataDirectory.appendingPathComponent("tls/ca.pem").path,
            ]
            let device = try await deviceSide.launch(deviceArguments)
            children.append(device)
            let registered = await device.waitForOutput(containing: "com.example.full ", timeout: .seconds(60))
            let token = try #require(registered?.split(separator: " ").last.map(String.init), "\(device.error)")

            let provider = try gateway.providerClient(keyFile: keyFile, trusting: gatewaySide, retryPolicy: .never)
            let filler = String(repeating: "x", count: 3_500)
            /// Sends push `number` and waits until the device shows it or says it could not keep it.
            func push(_ number: Int) async throws -> Bool? {
                let status = try await provider.send(
                    .alert(
                        bundleID: "com.example.full",
                        payload: APNsPayload(alert: .text("full-\(number)-"), custom: [.init("pad", .string(filler))])),
                    to: token
                ).status
                #expect(status == 200, "the gateway has room")
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    if device.output.contains("full-\(number)-") { return true }
                    if device.error.contains("Could not keep pushes") { return false }
                    try await Task.sleep(for: .milliseconds(20))
                }
                return nil
            }
            var sent = 0
            do {
                #expect(try await push(0) == true, "room at first: \(device.error)")
                sent = 1
                let fill = try await disk.fill()
                // 3.5 KB each: the store must grow (past the WAL's reused space) to keep them; 1,500 is more than 4 MB.
                var kept: Bool? = true
                while kept == true && sent < 1_500 {
                    kept = try await push(sent)
                    sent += 1
                }
                #expect(
                    kept == false,
                    "the daemon said it could not keep a push on a full disk (\(sent) sent): \(device.error.suffix(2_000))")
                let failed = sent - 1
                #expect(!device.output.contains("full-\(failed)-"), "not shown while it is not kept")
                #expect(device.status == nil, "the daemon keeps running")
                // Room again: the gateway kept the push it was not told of, and sends it on the next connection.
                try FileManager.default.removeItem(at: fill)
                #expect(
                    await device.waitForOutput(containing: "full-\(failed)-", timeout: .seconds(60)) != nil,
                    "shown once there is room: \(device.error.suffix(2_000))")
            } catch {
                try? await provider.shutdown()
                throw error
            }
            try await provider.shutdown()

            // Shown exactly once, and after kill -9 every push is in the delivered list exactly once: nothing was
            // acknowledged that was not on disk.
            for number in 0..<sent {
                #expect(device.output.components(separatedBy: "full-\(number)-").count - 1 == 1, "push \(number) shown once")
            }
            device.send(SIGKILL)
            _ = await device.wait(timeout: .seconds(10))
            let engine = try NotificationEngine.forDataDirectory(
                HeraldDataDirectory(url: deviceSide.dataDirectory), presenter: SilentPresenter(), scope: [],
                logger: .init(label: "test"))
            let delivered = try await engine.delivered(for: "com.example.full").map(\.request.content.body)
            #expect(delivered.sorted() == (0..<sent).map { "full-\($0)-" }.sorted())
            #expect(await gateway.child.stop() == 0)
        }
    }

    @Test(
        "The device's data directory full or read-only at start: `herald device` exits non-zero saying which database it cannot write and why"
    )
    func deviceDiskAtStart() async throws {
        try await withSmallDisk(megabytes: 2) { disk in
            let herald = try HeraldProcess(dataDirectory: disk.url.appendingPathComponent("data"))
            let arguments = ["device", "--gateway", "wss://localhost:9/device/v1", "--register", "com.example.start"]
            let fill = try await disk.fill()
            let full = try await herald.run(arguments, timeout: .seconds(30))
            #expect(full.status != 0)
            #expect(full.error.contains("notifications.sqlite") && full.error.contains("full"), "\(full.error)")
            try FileManager.default.removeItem(at: fill)
            #expect(try await herald.run(["notifications", "list"]).status == 0, "makes the store while there is room")
            try await disk.remount(readOnly: true)
            let readOnly = try await herald.run(arguments, timeout: .seconds(30))
            #expect(readOnly.status != 0)
            #expect(readOnly.error.contains("notifications.sqlite") && readOnly.error.contains("read-only"), "\(readOnly.error)")
            try await disk.remount(readOnly: false)
        }
    }

    @Test("A read-only data directory at start: the gateway exits non-zero and says which database it cannot write")
    func gatewayReadOnlyDisk() async throws {
        try await withSmallDisk(megabytes: 8) { disk in
            let herald = try HeraldProcess(dataDirectory: disk.url.appendingPathComponent("data"))
            let once = try await GatewayCommandTests.GatewayProcess.start(herald)
            #expect(await once.child.stop() == 0)
            try await disk.remount(readOnly: true)
            let refused = try await herald.run(["gateway", "--port", "0", "--plaintext-port", "0", "--device-port", "0"])
            #expect(refused.status != 0)
            #expect(refused.error.contains("gateway.sqlite"), "\(refused.error)")
            #expect(
                refused.error.lowercased().contains("read-only") || refused.error.lowercased().contains("readonly"),
                "\(refused.error)")
            try await disk.remount(readOnly: false)
        }
    }

    @Test("A damaged gateway database at start: moved aside (kept for inspection), a new one started, and the gateway serves")
    func gatewayDamagedDatabase() async throws {
        let herald = try HeraldProcess()
        let database = herald.dataDirectory.appendingPathComponent("gateway.sqlite")
        try Data(repeating: 0x5A, count: 64 * 1024).write(to: database)
        let gateway = try await GatewayCommandTests.GatewayProcess.start(herald)
        #expect(gateway.provider > 0)
        let aside = try FileManager.default.contentsOfDirectory(atPath: herald.dataDirectory.path)
            .filter { $0.hasPrefix("gateway.sqlite.corrupt-") }
        #expect(aside.count == 1, "\(aside)")
        #expect(gateway.child.error.contains("Database was damaged"), "\(gateway.child.error)")
        let token = try await herald.run(["tokens", "create", "--topic", "com.example.app"])
        #expect(token.status == 0)
        #expect(await gateway.child.stop() == 0)
    }
}
