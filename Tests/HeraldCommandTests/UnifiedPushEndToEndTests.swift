import Foundation
import GatewayTestSupport
import HeraldTestSupport
import HeraldTesting
import Testing

/// What the UnifiedPush test runs: a session bus, gdbus, and Debian's Python with its D-Bus and GLib bindings (the
/// connector is written with them, not with Herald's D-Bus code).
enum UnifiedPushTools {
    static let python = "/usr/bin/python3"
    static var available: Bool {
        ["/usr/bin/dbus-daemon", "/usr/bin/gdbus", python].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/gi")
    }
}

/// UnifiedPush on the Linux device (issue 46): `herald up` is the session bus's distributor; a connector written to
/// UnifiedPush's D-Bus specification (DBUS_0.3.0) registers, gets an endpoint, and receives what pywebpush (PyPI,
/// unmodified) sends to it — RFC 8291-encrypted to the app's own keys, decrypted by the app with http_ece.
@Suite(
    .heavy, .timeLimit(.minutes(5)),
    .enabled(
        if: UnifiedPushTools.available,
        "needs dbus-daemon, gdbus and python3-dbus with python3-gi (scripts/test installs them)"))
struct UnifiedPushEndToEndTests {
    /// The app's connector: owns its service name, serves `org.unifiedpush.Connector2` at `/org/unifiedpush/Connector`,
    /// finds the distributor among the bus's names and registers (`connect SERVICE TOKEN VAPID`), or unregisters
    /// (`unregister SERVICE TOKEN`). Prints one JSON line per event.
    static let connector = """
        import sys, json, base64, dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        mode, service, token = sys.argv[1], sys.argv[2], sys.argv[3]
        bus = dbus.SessionBus()
        def emit(**event): print(json.dumps(event), flush=True)
        names = sorted(str(n) for n in bus.list_names() if n.startswith("org.unifiedpush.Distributor."))
        emit(event="distributors", names=names)
        distributor = dbus.Interface(bus.get_object(names[0], "/org/unifiedpush/Distributor", introspect=False),
                                     "org.unifiedpush.Distributor2")
        if mode == "unregister":
            distributor.Unregister(dbus.Dictionary({"token": token}, signature="sv"), ignore_reply=True)
            bus.flush()
            sys.exit(0)
        class Connector(dbus.service.Object):
            @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", out_signature="a{sv}")
            def Message(self, args):
                emit(event="message", token=str(args["token"]), message=base64.b64encode(bytes(args["message"])).decode(),
                     id=str(args.get("id", "")))
                return dbus.Dictionary({"id": args.get("id", "")}, signature="sv")
            @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", out_signature="")
            def NewEndpoint(self, args):
                emit(event="endpoint", token=str(args["token"]), endpoint=str(args["endpoint"]))
            @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", out_signature="")
            def Unregistered(self, args):
                emit(event="unregistered", token=str(args["token"]))
        owned = dbus.service.BusName(service, bus)
        Connector(bus, "/org/unifiedpush/Connector")
        arguments = {"service": service, "token": token, "description": "Herald's test connector"}
        if sys.argv[4] != "none": arguments["vapid"] = sys.argv[4]
        result = distributor.Register(dbus.Dictionary(arguments, signature="sv"), timeout=120)
        emit(event="registered", result={str(k): str(v) for k, v in result.items()})
        GLib.MainLoop().run()
        """

    /// The app's own keys and decryption, with http_ece (pywebpush's): `keys FILE` makes a P-256 key (PEM in FILE) and
    /// an auth secret and prints `{"p256dh":…,"auth":…}`; `decrypt FILE AUTH MESSAGE` prints the plaintext.
    static let appKeys = """
        import sys, json, base64, os, http_ece
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives import serialization
        def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
        if sys.argv[1] == "keys":
            key = ec.generate_private_key(ec.SECP256R1())
            open(sys.argv[2], "wb").write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))
            point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
            print(json.dumps({"p256dh": b64(point), "auth": b64(os.urandom(16))}))
        else:
            key = serialization.load_pem_private_key(open(sys.argv[2], "rb").read(), password=None)
            auth = base64.urlsafe_b64decode(sys.argv[3] + "==")
            print(http_ece.decrypt(base64.b64decode(sys.argv[4]), private_key=key, auth_secret=auth,
                                   version="aes128gcm").decode())
        """

    /// A session bus of its own for the test.
    func withSessionBus(_ body: (_ address: String) async throws -> Void) async throws {
        let directory = ScratchFolder.url("unifiedpush-bus")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let address = "unix:path=\(socket)"
        let daemon = try await ChildProcess.launch(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(address)"])
        defer { daemon.send(SIGKILL) }
        try await eventually("the session bus listens", timeout: .seconds(30)) {
            FileManager.default.fileExists(atPath: socket)
        }
        try await body(address)
    }

    /// The JSON lines a connector printed with `"event": event`, in order.
    static func events(_ event: String, of connector: ChildProcess) -> [[String: Any]] {
        connector.output.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.filter { $0["event"] as? String == event }
    }

    @Test(
        "A connector written to UnifiedPush's D-Bus spec finds org.unifiedpush.Distributor.herald, registers with a VAPID key, gets its endpoint by NewEndpoint, and receives pywebpush's message as Message (ay, decrypted by the app); a message sent while the app is gone is given when it comes back (same endpoint); Unregister is confirmed by Unregistered and the endpoint is then 410"
    )
    func connectorReceivesPywebpush() async throws {
        try await withSessionBus { bus in
            let herald = try HeraldProcess()
            let environment = ["DBUS_SESSION_BUS_ADDRESS": bus]
            let up = try await herald.launch(
                [
                    "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0",
                    "--fcm-port", "0", "--console-port", "0", "--presenter", "terminal",
                ], environment: environment)
            var children = [up]
            defer { for child in children { child.send(SIGKILL) } }
            #expect(await up.waitForOutput(containing: "herald push", timeout: .seconds(60)) != nil, "\(up.error)")
            let ca = try #require(up.bannerValue("trust this CA:"))
            #expect(up.bannerValue("unifiedpush:")?.hasPrefix("org.unifiedpush.Distributor.herald on the session bus") == true)
            try await eventually("the distributor owns its name", timeout: .seconds(30)) {
                up.error.contains("UnifiedPush distributor on the session bus")
            }
            let introspection = try await ChildProcess.run(
                "/usr/bin/gdbus",
                [
                    "introspect", "--session", "--dest", "org.unifiedpush.Distributor.herald", "--object-path",
                    "/org/unifiedpush/Distributor",
                ], environment: herald.environment(environment), timeout: .seconds(30))
            #expect(introspection.output.contains("interface org.unifiedpush.Distributor2"), "\(introspection)")

            // The app server's VAPID key, the app's own keys.
            let (vapidFile, vapidKey) = try await WebPushEndToEndTests.vapidKey(in: herald.dataDirectory)
            let appKeyFile = herald.dataDirectory.appendingPathComponent("app-key.pem").path
            let made = try await ChildProcess.run("python3", ["-c", Self.appKeys, "keys", appKeyFile], timeout: .seconds(60))
            let keys = try #require(
                try JSONSerialization.jsonObject(with: Data(made.output.utf8)) as? [String: String], "\(made.error)")

            let (service, token) = ("org.example.Chat", UUID().uuidString)
            func launchConnector() async throws -> ChildProcess {
                let connector = try await ChildProcess.launch(
                    UnifiedPushTools.python, ["-c", Self.connector, "connect", service, token, vapidKey],
                    environment: herald.environment(environment))
                children.append(connector)
                return connector
            }
            let connector = try await launchConnector()
            #expect(
                await connector.waitForOutput(containing: #""event": "endpoint""#, timeout: .seconds(60)) != nil,
                "\(connector.output) \(connector.error) \(up.error)")
            #expect(
                Self.events("distributors", of: connector).first?["names"] as? [String]
                    == ["org.unifiedpush.Distributor.herald"])
            #expect(
                (Self.events("registered", of: connector).first?["result"] as? [String: String])?["success"]
                    == "REGISTRATION_SUCCEEDED", "\(connector.output)")
            let endpointEvent = try #require(Self.events("endpoint", of: connector).first)
            #expect(endpointEvent["token"] as? String == token)
            let endpoint = try #require(endpointEvent["endpoint"] as? String)
            #expect(endpoint.hasPrefix("https://localhost:") && endpoint.contains("/push/"), "\(endpoint)")

            // The app hands its endpoint and keys to its server; the server sends with pywebpush.
            let subscriptionFile = herald.dataDirectory.appendingPathComponent("chat-subscription.json").path
            try JSONSerialization.data(withJSONObject: ["endpoint": endpoint, "keys": keys]).write(
                to: URL(fileURLWithPath: subscriptionFile))
            func decrypted(_ message: [String: Any]) async throws -> String {
                let plain = try await ChildProcess.run(
                    "python3",
                    ["-c", Self.appKeys, "decrypt", appKeyFile, keys["auth"] ?? "", message["message"] as? String ?? ""],
                    timeout: .seconds(60))
                #expect(plain.status == 0, "\(plain.error)")
                return plain.output.trimmingCharacters(in: .newlines)
            }
            let sent = try await WebPushEndToEndTests.send(
                "new message in #herald", to: subscriptionFile, key: vapidFile, herald, ca: ca)
            #expect(sent.hasPrefix("201"), "\(sent)")
            #expect(
                await connector.waitForOutput(containing: #""event": "message""#, timeout: .seconds(60)) != nil,
                "\(connector.output) \(up.error)")
            let first = try #require(Self.events("message", of: connector).first)
            #expect(first["token"] as? String == token)
            #expect(!(first["id"] as? String ?? "").isEmpty, "the message's id is its delivery ID")
            #expect(try await decrypted(first) == "new message in #herald")

            // The app quits; a message sent meanwhile waits, and is given when the app registers again.
            _ = await connector.stop()
            let whileAway = try await WebPushEndToEndTests.send(
                "sent while the app was closed", to: subscriptionFile, key: vapidFile, herald, ca: ca)
            #expect(whileAway.hasPrefix("201"), "\(whileAway)")
            try await eventually("the distributor found the app gone", timeout: .seconds(60)) {
                up.error.contains("did not take its message")
            }
            let again = try await launchConnector()
            #expect(
                await again.waitForOutput(containing: #""event": "message""#, timeout: .seconds(60)) != nil,
                "\(again.output) \(again.error) \(up.error)")
            let second = try #require(Self.events("message", of: again).first)
            #expect(try await decrypted(second) == "sent while the app was closed")
            #expect(second["id"] as? String != first["id"] as? String)
            #expect(Self.events("endpoint", of: again).first?["endpoint"] as? String == endpoint, "same token, same endpoint")
            #expect(Self.events("message", of: again).count == 1, "the first message is not given twice")

            // Unregistering: confirmed to the app, the endpoint gone.
            let unregistered = try await ChildProcess.run(
                UnifiedPushTools.python, ["-c", Self.connector, "unregister", service, token],
                environment: herald.environment(environment), timeout: .seconds(60))
            #expect(unregistered.status == 0, "\(unregistered.error)")
            #expect(
                await again.waitForOutput(containing: #""event": "unregistered""#, timeout: .seconds(60)) != nil,
                "\(again.output) \(up.error)")
            let gone = try await WebPushEndToEndTests.send("never", to: subscriptionFile, key: vapidFile, herald, ca: ca)
            #expect(gone.hasPrefix("410"), "\(gone)")
            #expect(await up.stop() == 0)
        }
    }
}
