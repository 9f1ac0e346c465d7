import Crypto
import Foundation
import GatewayTestSupport
import HeraldConsole
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldGatewayStore
import HeraldTestSupport
import HeraldTesting
import HeraldWebPush
import Testing

/// The console in a real browser: headless Chromium from Debian's packages, driven by Selenium (`Browser/console_browser.py`)
/// as a person would use it, against a real gateway and console on 127.0.0.1. The test plays the device and the app:
/// it connects the device and unregisters the app when the script asks (`need: …` on its output).
///
/// Screenshots of each page are kept in `.build/console-screenshots/` (or `$HERALD_CONSOLE_SCREENSHOTS`).
@Suite(.heavy, .timeLimit(.minutes(6))) struct ConsoleBrowserTests {
    /// Where the screenshots go.
    static var screenshots: URL {
        if let folder = ProcessInfo.processInfo.environment["HERALD_CONSOLE_SCREENSHOTS"], !folder.isEmpty {
            return URL(fileURLWithPath: folder)
        }
        // Tests/HeraldConsoleTests/ConsoleBrowserTests.swift → the package's .build folder.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/console-screenshots")
    }

    /// The pages `console_browser.py` takes a screenshot of.
    static let pages = ["login", "send", "send-webpush", "log", "devices", "history", "metrics", "tools", "channels"]

    @Test(
        "In headless Chromium: a wrong operator token refused, the right one in; the payload's size counted live; a web push sent through its form (201, its log linked); the composer; a send to an offline token, its delivery log turning to delivered when the device connects; a <script> payload shown as text; the devices page; the log searched by token; the history and Modify; metrics as SVG; a generated JWT that passes, a broken one and why; the app unregistered and the next send answered 410; a channel made; a screenshot of each page"
    )
    func inChromium() async throws {
        let script = try #require(Bundle.module.url(forResource: "Browser/console_browser.py", withExtension: nil)).path
        try await ConsoleServerTests().withConsole { harness, browser, operatorToken in
            let deviceID = "browser-\(UUID().uuidString.prefix(6))"
            let token = try await harness.offlineToken(device: deviceID).token
            // A web app's subscription made with the console's VAPID key, for the web push form (on a device of its
            // own: the device above is to get only its own push when it connects).
            let subscription = try await harness.store.activeToken(
                deviceID: "\(deviceID)-web", bundleID: "webapp.news.example.com", environment: .development,
                purpose: .webPush(
                    applicationServerKey: ConsoleServerTests.vapidKey.publicKey.x963Representation.base64URLEncodedString()),
                at: Date())
            let userAgent = WebPushCipher.UserAgentKeys().subscription
            let endpoint = WebPushEndpoint(token: try #require(DeviceToken(hex: subscription.token)))
                .url(origin: "https://localhost:\(harness.ports.device)")
            let subscriptionJSON =
                #"{"endpoint":"\#(endpoint)","keys":{"p256dh":"\#(userAgent.p256dh.base64URLEncodedString())","auth":"\#(userAgent.auth.base64URLEncodedString())"}}"#
            let signals = try ScratchFolder.make("herald-browser-signals")
            defer { try? FileManager.default.removeItem(at: signals) }
            // Only this test's screenshots go (one left from an earlier run must not pass for this one's); the folder
            // stays, as the other test of the suite may be writing its own into it at the same time.
            for page in Self.pages {
                try? FileManager.default.removeItem(at: Self.screenshots.appendingPathComponent("\(page).png"))
            }
            var environment = ProcessInfo.processInfo.environment
            environment.merge([
                "CONSOLE_URL": "http://127.0.0.1:\(browser.port)", "OPERATOR_TOKEN": operatorToken, "DEVICE_TOKEN": token,
                "TOPIC": GatewayHarness.bundleID, "SCREENSHOTS": Self.screenshots.path, "SIGNALS": signals.path,
                "WEBPUSH_SUBSCRIPTION": subscriptionJSON,
                // Selenium finds nothing to download: the driver and the browser are Debian's, named in the script.
                "SE_OFFLINE": "true",
            ]) { $1 }
            let chromium = try await ChildProcess.launch("python3", [script], environment: environment)
            var device: DeviceChannelClient?
            var acknowledging: Task<Void, Never>?
            do {
                // The device comes online: the push kept for it is delivered, and the page shows it as it happens.
                try #require(
                    await chromium.waitForOutput(containing: "need: device-online", timeout: .seconds(240)) != nil,
                    "the browser never got to the delivery log: \(chromium.output)\(chromium.error)")
                let online = try await harness.connectDevice(deviceID)
                device = online
                let push = try #require(try await nextPush(online, seconds: 60))
                #expect(push.fromStorage && push.token == token)
                try await online.acknowledge(push)
                // The device takes what comes next as a device does (the gateway answers 200 once it has it), until it
                // closes.
                acknowledging = Task {
                    for await push in online.pushes { try? await online.acknowledge(push) }
                }
                try Data().write(to: signals.appendingPathComponent("device-online"))

                // The app unregisters: its token is revoked.
                try #require(
                    await chromium.waitForOutput(containing: "need: revoked", timeout: .seconds(240)) != nil,
                    "the browser never got to the revocation: \(chromium.output)\(chromium.error)")
                try await online.unregister(bundleID: GatewayHarness.bundleID)
                try Data().write(to: signals.appendingPathComponent("revoked"))

                let result = await chromium.wait(timeout: .seconds(240))
                #expect(result.status == 0 && !result.timedOut, "\(result.output)\n\(result.error)")
                let steps = result.output.split(separator: "\n").filter { $0.hasPrefix("ok: ") }
                #expect(steps.count == 14, "\(result.output)")
            } catch {
                _ = await chromium.stop()
                await device?.close()
                await acknowledging?.value
                throw error
            }
            await device?.close()
            await acknowledging?.value
            for page in Self.pages {
                let png = try Data(contentsOf: Self.screenshots.appendingPathComponent("\(page).png"))
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 5_000, "\(page).png")
            }
        }
    }
    @Test(
        "Issue 64 (9): in headless Chromium, a delivered notification drawn as iOS draws it — title and subtitle one line with an ellipsis, the body four lines on the lock screen and the banner, everything expanded, the thumbnail loaded, the actions with the destructive one red — and a screenshot of it"
    )
    func drawingInChromium() async throws {
        let script = try #require(Bundle.module.url(forResource: "Browser/notification_drawing.py", withExtension: nil)).path
        let png = try ConsoleServerTests.pngFile()
        let device = ListedDevice(apps: ["com.example.herald"])
        device.add(ConsoleServerTests.drawnNotification(attachment: png))
        device.setCategories(ConsoleServerTests.drawnCategories, of: "com.example.herald")
        try await ConsoleServerTests().withConsole(device: device) { _, browser, operatorToken in
            var environment = ProcessInfo.processInfo.environment
            environment.merge([
                "CONSOLE_URL": "http://127.0.0.1:\(browser.port)", "OPERATOR_TOKEN": operatorToken,
                "SCREENSHOTS": Self.screenshots.path, "SE_OFFLINE": "true",
            ]) { $1 }
            try? FileManager.default.removeItem(at: Self.screenshots.appendingPathComponent("notification.png"))
            let chromium = try await ChildProcess.launch("python3", [script], environment: environment)
            let result = await chromium.wait(timeout: .seconds(240))
            #expect(result.status == 0 && !result.timedOut, "\(result.output)\n\(result.error)")
            #expect(result.output.split(separator: "\n").filter { $0.hasPrefix("ok: ") }.count == 5, "\(result.output)")
            let shot = try Data(contentsOf: Self.screenshots.appendingPathComponent("notification.png"))
            #expect(shot.starts(with: [0x89, 0x50, 0x4E, 0x47]) && shot.count > 5_000)
        }
    }
}
