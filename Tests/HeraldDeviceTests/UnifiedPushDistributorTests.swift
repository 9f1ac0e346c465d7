import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import HeraldWebPush
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import HeraldDevice

/// The UnifiedPush distributor on a real session bus, called with gdbus and served a connector in Debian's Python
/// (UnifiedPush's D-Bus specification, DBUS_0.3.0); the gateway is a stand-in that issues and revokes tokens.
@Suite(
    .heavy, .timeLimit(.minutes(3)),
    .enabled(
        if: ["/usr/bin/dbus-daemon", "/usr/bin/gdbus", "/usr/bin/python3"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        } && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus"),
        "needs dbus-daemon, gdbus and python3-dbus with python3-gi (scripts/test installs them)"))
struct UnifiedPushDistributorTests {
    static let quiet = Logger(label: "test.unifiedpush") { _ in SwiftLogNoOpLogHandler() }

    /// Issues tokens while "connected", as the device's gateway session does.
    final class Link: GatewayLink {
        let connected = Mutex(true)
        let issued = Mutex<[(String, TokenPurpose)]>([])
        let revoked = Mutex<[(String, TokenPurpose)]>([])

        func register(bundleIdentifier: String, purpose: TokenPurpose) async throws -> String {
            guard connected.withLock({ $0 }) else { throw DeviceDaemon.RegistrationError.notConnected }
            issued.withLock { $0.append((bundleIdentifier, purpose)) }
            return DeviceToken.random().hex
        }

        func unregister(bundleIdentifier: String, purpose: TokenPurpose) async throws {
            revoked.withLock { $0.append((bundleIdentifier, purpose)) }
        }

        func subscribe(channelID: String, bundleIdentifier: String) async throws {}
        func unsubscribe(channelID: String, bundleIdentifier: String) async {}
    }

    /// Runs `body` with a distributor serving a session bus of its own, then stops both.
    func withDistributor(
        _ link: Link, _ body: (_ bus: String, _ distributor: UnifiedPushDistributor) async throws -> Void
    ) async throws {
        let socket = "/tmp/herald-up-bus-\(UUID().uuidString.prefix(8))"
        let bus = "unix:path=\(socket)"
        let daemon = try await ChildProcess.launch(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(bus)"])
        defer {
            daemon.send(SIGKILL)
            try? FileManager.default.removeItem(atPath: socket)
        }
        try await eventually("the session bus listens", timeout: .seconds(30)) { FileManager.default.fileExists(atPath: socket) }
        let distributor = UnifiedPushDistributor(
            busAddress: bus, url: nil, gateway: link, serviceOrigin: "https://localhost:2199", clock: VirtualClock(),
            logger: Self.quiet)
        let group = ServiceGroup(services: [distributor], logger: Self.quiet)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await eventually("the distributor owns its name", timeout: .seconds(30)) {
                    let owner = try? await Self.gdbus(
                        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                        ["org.unifiedpush.Distributor.herald"])
                    return owner?.output.contains("true") == true
                }
                try await body(bus, distributor)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// One `gdbus call`.
    static func gdbus(
        _ bus: String, _ destination: String, _ path: String, _ method: String, _ arguments: [String]
    ) async throws -> ChildProcess.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus
        return try await ChildProcess.run(
            "/usr/bin/gdbus",
            ["call", "--session", "--dest", destination, "--object-path", path, "--method", method] + arguments,
            environment: environment, timeout: .seconds(30))
    }

    /// Calls the distributor's `Register` with a GVariant text dictionary; its output, or its error.
    static func register(_ bus: String, _ arguments: String) async throws -> String {
        let result = try await gdbus(
            bus, "org.unifiedpush.Distributor.herald", "/org/unifiedpush/Distributor",
            "org.unifiedpush.Distributor2.Register", [arguments])
        return result.status == 0 ? result.output : result.error
    }

    @Test(
        "Register: InvalidArgs without a service, with a token over 100 bytes, a vapid that is no P-256 key or another app's token; NETWORK while the gateway is away; the same token and key keep one subscription (NewEndpoint again), another key a new one with the old revoked; Unregister revokes; other methods are UnknownMethod"
    )
    func registering() async throws {
        let link = Link()
        try await withDistributor(link) { bus, distributor in
            let invalid = "org.freedesktop.DBus.Error.InvalidArgs"
            #expect(try await Self.register(bus, "{'token': <'t1'>}").contains(invalid))
            let longToken = String(repeating: "x", count: 101)
            #expect(
                try await Self.register(bus, "{'service': <'org.example.Chat'>, 'token': <'\(longToken)'>}").contains(invalid))
            #expect(
                try await Self.register(bus, "{'service': <'org.example.Chat'>, 'token': <'t1'>, 'vapid': <'BAAA'>}")
                    .contains(invalid))

            let first = try await Self.register(
                bus, "{'service': <'org.example.Chat'>, 'token': <'t1'>, 'description': <'Chat'>}")
            #expect(first.contains("'success': <'REGISTRATION_SUCCEEDED'>"), "\(first)")
            let registration = try #require(try await distributor.registration(token: "t1"))
            #expect(registration.bundleID == UnifiedPushDistributor.bundleID(service: "org.example.Chat", token: "t1"))
            #expect(registration.bundleID.hasPrefix("org.example.Chat.up-") && registration.bundleID.count == 32)
            #expect(registration.endpoint.hasPrefix("https://localhost:2199/push/"))
            #expect(registration.description == "Chat")
            #expect(link.issued.withLock { $0.map(\.1) } == [.webPush(applicationServerKey: nil)])

            #expect(try await Self.register(bus, "{'service': <'org.example.Chat'>, 'token': <'t1'>}").contains("SUCCEEDED"))
            #expect(try await distributor.registration(token: "t1") == registration, "same token, same subscription")
            #expect(link.issued.withLock { $0.count } == 1)

            let key = WebPushCipher.UserAgentKeys().subscription.p256dh.base64URLEncodedString()  // any P-256 point
            #expect(
                try await Self.register(bus, "{'service': <'org.example.Chat'>, 'token': <'t1'>, 'vapid': <'\(key)'>}")
                    .contains("SUCCEEDED"))
            let rekeyed = try #require(try await distributor.registration(token: "t1"))
            #expect(rekeyed.endpoint != registration.endpoint && rekeyed.vapid == key)
            #expect(link.revoked.withLock { $0.map(\.1) } == [.webPush(applicationServerKey: nil)])
            #expect(link.issued.withLock { $0.last?.1 } == .webPush(applicationServerKey: key))

            #expect(try await Self.register(bus, "{'service': <'org.example.Other'>, 'token': <'t1'>}").contains(invalid))

            link.connected.withLock { $0 = false }
            let away = try await Self.register(bus, "{'service': <'org.example.Chat'>, 'token': <'t2'>}")
            #expect(away.contains("'REGISTRATION_FAILED'") && away.contains("'reason': <'NETWORK'>"), "\(away)")
            link.connected.withLock { $0 = true }

            let unregistered = try await Self.gdbus(
                bus, "org.unifiedpush.Distributor.herald", "/org/unifiedpush/Distributor",
                "org.unifiedpush.Distributor2.Unregister", ["{'token': <'t1'>}"])
            #expect(unregistered.status == 0, "\(unregistered.error)")
            #expect(try await distributor.registrations().isEmpty)
            #expect(link.revoked.withLock { $0.last?.1 } == .webPush(applicationServerKey: key))

            let unknown = try await Self.gdbus(
                bus, "org.unifiedpush.Distributor.herald", "/org/unifiedpush/Distributor",
                "org.unifiedpush.Distributor1.Register",
                ["a", "b", "c"])
            #expect(unknown.error.contains("org.freedesktop.DBus.Error.UnknownMethod"), "\(unknown.error)")
        }
    }

    /// A connector that owns `org.example.Chat` and prints each message's id and body (hex).
    static let connector = """
        import sys, dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        class Connector(dbus.service.Object):
            @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", out_signature="a{sv}")
            def Message(self, args):
                print("message", str(args["id"]), bytes(args["message"]).hex(), flush=True)
                return dbus.Dictionary({"id": args["id"]}, signature="sv")
        owned = dbus.service.BusName("org.example.Chat", bus)
        Connector(bus, "/org/unifiedpush/Connector")
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    @Test(
        "Messages to an app not on the bus wait, and are given in order once its name appears; one the gateway sends again is given once"
    )
    func waitingMessages() async throws {
        let link = Link()
        try await withDistributor(link) { bus, distributor in
            #expect(try await Self.register(bus, "{'service': <'org.example.Chat'>, 'token': <'t1'>}").contains("SUCCEEDED"))
            let registration = try #require(try await distributor.registration(token: "t1"))
            func push(_ id: String, _ body: [UInt8]) -> DevicePush {
                DevicePush(
                    deliveryID: id, token: registration.deviceToken, topic: registration.bundleID + "/x",
                    bundleID: registration.bundleID, pushType: "webpush", priority: 10, apnsID: id, collapseID: nil,
                    payload: Data(body).base64URLEncodedString(), fromStorage: false)
            }
            #expect(try await distributor.take(push("a", [1, 2, 3])))
            #expect(try await distributor.take(push("b", [4])))
            #expect(try await distributor.take(push("a", [1, 2, 3])), "sent again by the gateway: taken, not kept twice")
            let stranger = DevicePush(
                deliveryID: "z", token: DeviceToken.random().hex, topic: "x/y", bundleID: "x", pushType: "webpush",
                priority: 10, apnsID: "z", collapseID: nil, payload: "AQ", fromStorage: false)
            #expect(try await distributor.take(stranger) == false, "no registration holds its token")

            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus
            let app = try await ChildProcess.launch("/usr/bin/python3", ["-c", Self.connector], environment: environment)
            defer { app.send(SIGKILL) }
            #expect(await app.waitForOutput(containing: "message b", timeout: .seconds(60)) != nil, "\(app.output) \(app.error)")
            #expect(try await distributor.take(push("a", [1, 2, 3])))
            #expect(try await distributor.take(push("c", [5])))
            #expect(await app.waitForOutput(containing: "message c", timeout: .seconds(60)) != nil, "\(app.output)")
            let lines = app.output.split(separator: "\n").filter { $0.hasPrefix("message") }
            #expect(lines == ["message a 010203", "message b 04", "message c 05"])
        }
    }
}
