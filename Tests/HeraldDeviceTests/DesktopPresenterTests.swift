import Foundation
import GatewayTestSupport
import HeraldTestSupport
import HeraldTesting
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import UserNotifications

@testable import HeraldDevice

/// The programs the desktop test runs: a virtual X server, a session bus and dunst (scripts/test installs them).
enum DesktopTools {
    static let programs = [
        "/usr/bin/Xvfb", "/usr/bin/dbus-daemon", "/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/import", "/usr/bin/gdbus",
    ]
    static var available: Bool { programs.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
}

/// The freedesktop presenter against a real notification server: dunst on a virtual X display, on its own session bus.
@Suite(
    .heavy, .timeLimit(.minutes(2)),
    .enabled(if: DesktopTools.available, "needs Xvfb, dbus-daemon, dunst, ImageMagick and gdbus (scripts/test installs them)"))
struct DesktopPresenterTests {
    /// Runs `body` with dunst showing on a fresh X display and session bus, and ends all three afterwards.
    func withDesktop(_ body: (_ busAddress: String, _ display: String) async throws -> Void) async throws {
        let number = Int.random(in: 200...899)
        let display = ":\(number)"
        let busPath = "/tmp/herald-bus-\(UUID().uuidString.prefix(8))"
        let bus = "unix:path=\(busPath)"
        let xvfb = try await ChildProcess.launch("/usr/bin/Xvfb", [display, "-screen", "0", "1024x600x24", "-nolisten", "tcp"])
        let daemon = try await ChildProcess.launch(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(bus)"])
        // dunst needs both listening: started before them on a loaded machine, it failed, and the bus then started
        // one of its own that died (signal 5) on the display that was not there yet.
        for socket in ["/tmp/.X11-unix/X\(number)", busPath] {
            try await eventually("\(socket) listening", timeout: .seconds(30)) { FileManager.default.fileExists(atPath: socket) }
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus
        let dunst = try await ChildProcess.launch("/usr/bin/dunst", [], environment: environment)
        defer { for child in [dunst, daemon, xvfb] { child.send(SIGKILL) } }
        do {
            // Only once dunst has the name: a call to it before would have the bus start a dunst of its own.
            let owned = try await SessionBus.waitForOwner(
                of: "org.freedesktop.Notifications", address: bus, timeout: .seconds(30))
            try #require(owned, "dunst did not take org.freedesktop.Notifications: \(dunst.error)")
            try await body(bus, display)
        } catch {
            for child in [dunst, daemon, xvfb] { await child.stop() }
            throw error
        }
        for child in [dunst, daemon, xvfb] { await child.stop() }
    }

    /// Connects to the notification service once dunst has taken its name (10 s at most).
    func connect(_ bus: String) async throws -> FreedesktopPresenter {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                return try await FreedesktopPresenter.connect(address: bus, logger: Logger(label: "test.desktop"))
            } catch {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    @Test(
        "Issue 16: a notification shows on dunst (screenshot kept); the default action invoked through D-Bus and a category action arrive at the app's didReceive"
    )
    func dunst() async throws {
        try await withDesktop { bus, display in
            let presenter = try await connect(bus)
            #expect(presenter.serverCapabilities.contains("actions"))
            let device = try NotificationTestEnvironment(bundleIdentifier: "com.example.desktop", presenter: presenter)
            let router = DesktopAnswerRouter(presenter: presenter, engine: device.engine)
            let routing = Task { try await router.run() }
            defer { routing.cancel() }
            let center = device.center()
            let delegate = LinkedAppDelegate()
            center.delegate = delegate
            device.setForeground(false)  // in the background, the system shows the banner
            #expect(try await center.requestAuthorization(options: [.alert, .sound, .badge]))
            let confirm = UNNotificationAction(identifier: "category.test.confirm", title: "Confirm", options: [.foreground])
            center.setNotificationCategories([
                UNNotificationCategory(identifier: "category.test", actions: [confirm], intentIdentifiers: [], options: [])
            ])
            for identifier in ["first", "second"] {
                let content = UNMutableNotificationContent()
                content.title = "这是一个标题"
                content.subtitle = identifier
                content.body = "你收到一个内容"
                content.categoryIdentifier = "category.test"
                try await center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
            }
            await device.settle()
            try await eventually("both on the desktop", timeout: .seconds(30)) {
                presenter.desktopID(of: "first", for: "com.example.desktop") != nil
                    && presenter.desktopID(of: "second", for: "com.example.desktop") != nil
            }
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus
            let count = try await ChildProcess.run("/usr/bin/dunstctl", ["count", "displayed"], environment: environment)
            #expect(count.output.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(count.output) \(count.error)")

            // What the person sees, kept beside the build.
            let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/test-screenshots", isDirectory: true)
            try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
            let screenshot = screenshots.appendingPathComponent("desktop-notification.png")
            let taken = try await ChildProcess.run(
                "/usr/bin/import", ["-display", display, "-window", "root", screenshot.path], environment: environment)
            #expect(taken.status == 0, "\(taken.error)")
            let lit = try await ChildProcess.run(
                "/usr/bin/convert", [screenshot.path, "-crop", "400x200+600+0", "-format", "%[fx:mean]", "info:"])
            #expect((Double(lit.output) ?? 0) > 0.02, "the notification's corner of the screen is not dark: \(lit.output)")

            // The person clicks the notification on top: dunst invokes its default action.
            let clicked = try await ChildProcess.run("/usr/bin/dunstctl", ["action", "0"], environment: environment)
            #expect(clicked.status == 0, "\(clicked.error)")
            try await eventually("the default action at didReceive") {
                delegate.responses == [UNNotificationDefaultActionIdentifier]
            }

            // A category action on the other one, as the server announces it (ActionInvoked on the bus).
            let other = try #require(
                ["first", "second"].first { presenter.desktopID(of: $0, for: "com.example.desktop") != nil })
            let id = try #require(presenter.desktopID(of: other, for: "com.example.desktop"))
            let emitted = try await ChildProcess.run(
                "/usr/bin/gdbus",
                [
                    "emit", "--session", "--object-path", "/org/freedesktop/Notifications",
                    "--signal", "org.freedesktop.Notifications.ActionInvoked", "uint32 \(id)", "category.test.confirm",
                ], environment: environment)
            #expect(emitted.status == 0, "\(emitted.error)")
            try await eventually("the action at didReceive") {
                delegate.responses == [UNNotificationDefaultActionIdentifier, "category.test.confirm"]
            }
            #expect(await center.deliveredNotifications().isEmpty)
        }
    }

    @Test("Issue 28: a Live Activity is one desktop notification, replaced in place at each change (screenshot kept)")
    func liveActivityInPlace() async throws {
        try await withDesktop { bus, display in
            let presenter = try await connect(bus)
            let activity = LiveActivityPresentation(
                bundleIdentifier: "com.example.score", activityID: "A1", attributesType: "ScoreAttributes",
                attributes: #"{"home":"Lions"}"#, contentState: #"{"home":0,"away":0}"#, state: "active")
            await presenter.presentLiveActivity(activity)
            let first = try #require(presenter.desktopID(of: "live-activity:A1", for: "com.example.score"))
            var goal = activity
            goal.contentState = #"{"home":1,"away":0}"#
            goal.alertTitle = "Goal!"
            goal.alertBody = "Lions score"
            await presenter.presentLiveActivity(goal)
            #expect(presenter.desktopID(of: "live-activity:A1", for: "com.example.score") == first, "replaced, not added")
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus
            try await eventually("one notification on the desktop", timeout: .seconds(30)) {
                let count = try await ChildProcess.run("/usr/bin/dunstctl", ["count", "displayed"], environment: environment)
                return count.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
            let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/test-screenshots", isDirectory: true)
            try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
            let taken = try await ChildProcess.run(
                "/usr/bin/import",
                ["-display", display, "-window", "root", screenshots.appendingPathComponent("desktop-live-activity.png").path],
                environment: environment)
            #expect(taken.status == 0, "\(taken.error)")
        }
    }

    @Test("D-Bus messages: a Notify call is written to the specification's layout and read back whole")
    func messages() throws {
        let call = DBusMessage.call(
            serial: 7, destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "Notify",
            body: [
                .string("com.example.app"), .uint32(0), .string(""), .string("标题"), .string("body"),
                .strings(["default", "Open"]), .dictionary([("urgency", .byte(1)), ("image-path", .string("/a.png"))]),
                .int32(-1),
            ])
        let bytes = call.encoded()
        #expect(Array(bytes.prefix(4)) == [UInt8(ascii: "l"), 1, 0, 1], "little-endian, method call, version 1")
        #expect(try DBusMessage.length(ofMessageStartingWith: bytes) == bytes.count)
        #expect(try DBusMessage.length(ofMessageStartingWith: bytes.prefix(15)) == nil)
        let read = try DBusMessage(bytes: bytes)
        #expect(read.member == "Notify" && read.destination == "org.freedesktop.Notifications" && read.serial == 7)
        #expect(read.body == call.body)
        #expect(throws: DBusMessage.Malformed.self) { try DBusMessage(bytes: Array(bytes.prefix(20))) }
    }
}

/// D-Bus messages as UnifiedPush uses them.
struct DBusMessageTests {
    @Test(
        "UnifiedPush's messages: a{sv} with strings, ay and booleans, nested, and the NO_REPLY_EXPECTED flag are written and read back; containers nested over 32 deep are malformed"
    )
    func unifiedPushMessages() throws {
        let message = DBusMessage(
            kind: .methodCall, flags: .noReplyExpected, serial: 3, path: "/org/unifiedpush/Connector",
            interface: "org.unifiedpush.Connector2", member: "Message", destination: "org.example.Chat",
            body: [
                .dictionary([
                    ("token", .string("t")), ("message", .bytes([0, 1, 255])), ("empty", .bytes([])),
                    ("id", .string("m1")), ("flag", .boolean(true)), ("inner", .dictionary([("n", .uint32(7))])),
                ])
            ])
        let bytes = message.encoded()
        #expect(bytes[2] == 1, "the flags byte")
        #expect(try DBusMessage(bytes: bytes) == message)

        var nested = DBusMessage.Value.string("deep")
        for _ in 0..<40 { nested = .dictionary([("k", nested)]) }
        let deep = DBusMessage(kind: .signal, serial: 1, path: "/a", interface: "a.b", member: "C", body: [nested])
        #expect(throws: DBusMessage.Malformed.self) { try DBusMessage(bytes: deep.encoded()) }
    }
}
