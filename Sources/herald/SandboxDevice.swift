import Crypto
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import HeraldGateway
import HeraldNotificationEngine
import Logging
import NIOPosix
import ServiceLifecycle
import UserNotifications

/// The device of `herald up`, a service beside the gateway in its one `ServiceGroup`: once the gateway listens, it
/// assembles this machine's device on it (the port it really listens on: `--device-port 0` picks one) as
/// `herald device` does, and runs the device's services in a group of their own — with the demo app's registration and
/// the banner — until the outer group shuts down.
struct SandboxDevice: Service {
    let gateway: HeraldGateway
    let engine: NotificationEngine
    let keys: [ProviderKeyRecord]
    let directory: HeraldDataDirectory
    let demoApp: String
    /// The demo app's broadcast channel, if it has one.
    let demoChannel: String?
    /// The demo app's Firebase project, when FCM's API is served.
    let fcm: FCMProject?
    /// Where the gateway keeps FCM registrations: the demo device's, for the banner.
    let fcmStore: any FCMStore
    let serviceExtensionTime: Duration
    /// Which delivery rules the device applies.
    let deliveryRules: DeliveryModel.Kind
    /// The seed of the choices the rules leave to the device, if one was given.
    let deliverySeed: UInt64?
    /// The desktop presenter, when notifications show on a desktop.
    let desktop: FreedesktopPresenter?
    /// The session bus the device is a UnifiedPush distributor on, if any.
    let unifiedPushBus: String?
    /// What the device's parts signal when what they keep changes (the test-bed API's waits on them).
    let changes: DeviceChanges
    /// The console, and the operator token made for this start.
    let console: (server: ConsoleServer, operatorToken: String)?
    /// What the test-bed API's status says, set with the banner.
    let status: SandboxStatus
    /// The data directory's mode before `herald up` made it owner-only, if it did: said once it is up.
    let tightenedFrom: Int?
    let logger: Logger

    /// A Firebase project of the sandbox: its ID and its service-account file.
    struct FCMProject: Sendable {
        var projectID: String
        var credentials: String
    }

    func run() async throws {
        let ports: HeraldGateway.Ports
        do {
            ports = try await gateway.ports()
        } catch is CancellationError {
            // The gateway stopped before it listened. Returning now would be "a service finished unexpectedly" and
            // could win the race against the gateway's own error (a port in use): wait until this service is told
            // to stop — the graceful shutdown of Ctrl-C right away (not a failure), or the group's cancellation once
            // the gateway's error is in.
            try? await gracefulShutdown()
            return
        }
        let device = try assembleDevice(
            engine: engine, gateway: "wss://localhost:\(ports.device)/device/v1",
            cacert: gateway.certificateAuthority?.certificateURL.path, directory: directory, environment: .development,
            serviceExtensionTime: serviceExtensionTime, desktop: desktop, deliveryRules: deliveryRules,
            deliverySeed: deliverySeed, unifiedPushBus: unifiedPushBus, changes: changes,
            logger: logger)
        let deviceModelName = deliveryRules.rawValue + (deliverySeed.map { " --seed \($0)" } ?? "")
        let (daemon, engine, keys, directory, demoApp, demoChannel, console, deliveryRules, logger) = (
            device.daemon, engine, keys, directory, demoApp, demoChannel, console, deliveryRules, logger
        )
        let (fcm, store, caPath, status) = (
            fcm, fcmStore, gateway.certificateAuthority?.certificateURL.path ?? "-", status
        )
        let tightenedFrom = self.tightenedFrom
        let banner = StartupTask {
            directory.sayTightened(from: tightenedFrom, logger: logger)
            let token = await Self.prepareDemoApp(demoApp, engine: engine, daemon: daemon, logger: logger)
            let webApp = await Self.prepareDemoWebApp(
                daemon: daemon, serviceOrigin: "https://localhost:\(ports.device)", directory: directory, logger: logger)
            let apps = try await engine.bundleIdentifiers()
            var pendingCount = 0
            for app in apps { pendingCount += try await engine.pending(for: app).count }
            let key = keys.first { $0.keyID == HeraldCommand.Up.keyID } ?? keys[0]
            // The .p8 in the data directory that signs for the key: up's own file, unless `keys create/import
            // --replace` registered another one, which the banner then says.
            let signingFile = await key.keyFile(among: ProviderKeyRecord.p8Files(in: directory.url))
            let keyFile = signingFile ?? HeraldCommand.Up.keyFile(keyID: key.keyID, in: directory).path
            let keyFileSigns = signingFile != nil
            let keyLine =
                keyFileSigns
                ? "\(key.keyID) (team \(key.teamID)), file \(keyFile)"
                : "\(key.keyID) (team \(key.teamID)), registered \(key.createdAt.formatted(.iso8601)); no .p8 in the data directory signs for it (keys create/import --replace registered another): push with the .p8 you registered"
            let pushKey = keyFileSigns ? HeraldCommand.Up.shellQuoted(keyFile) : "<the .p8 you registered>"
            let dataOption = directory.commandLineOption()
            var consoleLines = ""
            if let console, let port = await console.server.port() {
                consoleLines =
                    "\n  console:        http://127.0.0.1:\(port)/log\n  operator token: \(console.operatorToken)\n  test-bed API:   http://127.0.0.1:\(port)/api/v1 (JSON for test suites: docs/test-bed-api.md)"
            }
            var fcmLines = ""
            var fcmFacts: JSONValue = .null
            if let fcm, let port = ports.fcm {
                let fcmToken = await token.asyncFlatMap { apnsToken in
                    try? await store.fcmRegistration(forAPNsToken: apnsToken, projectID: fcm.projectID, at: Date()).token
                }
                fcmFacts = .members([
                    "proxy": .string("http://127.0.0.1:\(port)"), "project": .string(fcm.projectID),
                    "credentials": .string(fcm.credentials), "token": fcmToken.map(JSONValue.string),
                ])
                fcmLines = """

                      fcm proxy:       http://127.0.0.1:\(port)
                      fcm project:     \(fcm.projectID)
                      fcm credentials: \(fcm.credentials)
                      fcm token:       \(fcmToken ?? "none: the demo app has no device token")
                    """
                if let fcmToken {
                    fcmLines += """

                        Send to the demo app through Firebase Cloud Messaging's API with firebase-admin (pip install firebase-admin):
                          HTTPS_PROXY=http://127.0.0.1:\(port) REQUESTS_CA_BUNDLE=\(HeraldCommand.Up.shellQuoted(caPath)) GOOGLE_APPLICATION_CREDENTIALS=\(HeraldCommand.Up.shellQuoted(fcm.credentials)) python3 -c "import firebase_admin; from firebase_admin import messaging as m; firebase_admin.initialize_app(); print(m.send(m.Message(token='\(fcmToken)', notification=m.Notification(title='Hello', body='from firebase-admin'))))"
                        """
                }
            }
            var webPushLines = ""
            if let webApp {
                webPushLines = """

                      web push:       \(webApp.subscriptionFile) (web app \(DemoWebApp.origin), VAPID key \(webApp.vapidKeyFile))
                    Send a Declarative Web Push message to the demo web app with pywebpush (pip install pywebpush):
                      REQUESTS_CA_BUNDLE=\(HeraldCommand.Up.shellQuoted(caPath)) SUBSCRIPTION=\(HeraldCommand.Up.shellQuoted(webApp.subscriptionFile)) VAPID_KEY=\(HeraldCommand.Up.shellQuoted(webApp.vapidKeyFile)) python3 -c "import json, os, pywebpush; print(pywebpush.webpush(json.load(open(os.environ['SUBSCRIPTION'])), data=json.dumps({'web_push': 8030, 'notification': {'title': 'Hello', 'body': 'from pywebpush', 'navigate': '\(DemoWebApp.origin)/'}}), vapid_private_key=os.environ['VAPID_KEY'], vapid_claims={'sub': 'mailto:you@example.com'}, ttl=60).status_code)"
                    """
            }
            if let unifiedPush = daemon.unifiedPush {
                webPushLines += """

                      unifiedpush:    \(unifiedPush.busName) on the session bus (Linux apps register there)
                    """
            }
            status.ready(
                .members([
                    "dataDirectory": .string(directory.url.path),
                    "apns": .members([
                        "url": .string("https://localhost:\(ports.provider[0])"),
                        "plaintextURL": .string("http://127.0.0.1:\(ports.provider[1])"),
                        "channelsURL": .string("https://localhost:\(ports.provider[2])"),
                        "certificateAuthority": gateway.certificateAuthority.map { JSONValue.string($0.certificateURL.path) },
                        "keyID": .string(key.keyID), "teamID": .string(key.teamID),
                        "keyFile": keyFileSigns ? .string(keyFile) : .null,
                    ]),
                    "devices": .string("wss://localhost:\(ports.device)/device/v1"),
                    "demoApp": .members([
                        "bundleID": .string(demoApp), "deviceToken": token.map(JSONValue.string),
                        "channel": demoChannel.map(JSONValue.string),
                    ]),
                    "fcm": fcmFacts,
                    "webPush": webApp.map { app -> JSONValue in
                        .members([
                            "subscriptionFile": .string(app.subscriptionFile), "vapidKeyFile": .string(app.vapidKeyFile),
                            "origin": .string(DemoWebApp.origin),
                        ])
                    },
                    "deviceModel": .string(deviceModelName),
                ]))
            // Through the presenter's own file handle, unbuffered, so the banner comes before any notification.
            let text = """
                Herald is up.
                  data directory: \(directory.url.path)
                  apps: \(apps.count), pending notifications: \(pendingCount)
                  APNs gateway:   https://localhost:\(ports.provider[0]) (http://127.0.0.1:\(ports.provider[1]) plaintext), devices wss://localhost:\(ports.device)/device/v1
                  channels:       https://localhost:\(ports.provider[2])/1/apps/\(demoApp)/channels, demo channel \(demoChannel ?? "none") (policy 1)
                  trust this CA:  \(gateway.certificateAuthority?.certificateURL.path ?? "-")\(consoleLines)
                  provider key:   \(keyLine)
                  demo app:       \(demoApp), device token \(token ?? "none: the device could not register it (see the log)")
                  device model:   \(deviceModelName)\(deliveryRules == .iphone ? " (\(HeraldCommand.shellName) device power low|normal, wake, force-quit <app>, status)" : "")\(fcmLines)\(webPushLines)
                \(token.map { """
                Push to the demo app from another terminal:
                  \(HeraldCommand.shellName) push\(dataOption) --gateway https://localhost:\(ports.provider[0]) --p8 \(pushKey) --key-id \(key.keyID) --team-id \(key.teamID) --topic \(demoApp) --token \($0) --title Hello --body 'from Herald'
                """ } ?? "")
                Or schedule a local one:
                  \(HeraldCommand.shellName) notifications send\(dataOption) \(demoApp) --title Hello --body 'from Herald' --in 5
                Notifications appear below as they arrive. Ctrl-C stops.

                """
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        var parts = device.servicesOnEngine.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        parts.append(.init(service: banner, serviceName: "demo app and banner"))
        try await ServiceGroup(
            configuration: ServiceGroupConfiguration(services: parts, gracefulShutdownSignals: [], logger: logger)
        ).run()
    }

    /// Allows the demo app notifications the first time (the person would tap Allow) and registers it; `nil`
    /// (with the reason logged) when the device could not, e.g. because `up` is already stopping.
    private static func prepareDemoApp(
        _ demoApp: String, engine: NotificationEngine, daemon: DeviceDaemon, logger: Logger
    ) async -> String? {
        do {
            if try await engine.appState(for: demoApp).settings.authorizationStatus == .notDetermined {
                try await engine.setAuthorization(.authorized, options: [.alert, .sound, .badge], for: demoApp)
            }
            return try await daemon.register(bundleIdentifier: demoApp)
        } catch {
            logger.error("Could not register the demo app", metadata: ["app.bundle_id": "\(demoApp)", "error": "\(error)"])
            return nil
        }
    }
}

/// The sandbox's demo web app: a web push subscription on the device, as a page at its origin would make with its
/// server's VAPID key, kept in `<data-dir>/webpush/`.
enum DemoWebApp {
    static let origin = "https://app.example.com"

    /// The files a sender needs: the subscription's JSON and the VAPID private key (PEM).
    struct Files: Sendable {
        var subscriptionFile: String
        var vapidKeyFile: String
    }
}

extension SandboxDevice {
    /// Subscribes the demo web app (the same subscription at every start, with the VAPID key made at the first) and
    /// writes its `PushSubscription` JSON; `nil` (with the reason logged) when the device could not.
    fileprivate static func prepareDemoWebApp(
        daemon: DeviceDaemon, serviceOrigin: String, directory: HeraldDataDirectory, logger: Logger
    ) async -> DemoWebApp.Files? {
        let folder = directory.url.appendingPathComponent("webpush")
        let keyFile = folder.appendingPathComponent("demo-vapid.pem")
        let subscriptionFile = folder.appendingPathComponent("demo-subscription.json")
        do {
            let pem: String = try await NIOThreadPool.singleton.runIfActive {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                if let pem = try? String(contentsOf: keyFile, encoding: .utf8) { return pem }
                let pem = P256.Signing.PrivateKey().pemRepresentation
                try Data(pem.utf8).write(to: keyFile, options: .atomic)
                return pem
            }
            let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
            let subscription = try await daemon.webPush.subscribe(
                origin: DemoWebApp.origin,
                applicationServerKey: key.publicKey.x963Representation.base64URLEncodedString(),
                serviceOrigin: serviceOrigin,
                issueToken: { try await daemon.register(bundleIdentifier: $0, purpose: $1) },
                revokeToken: { try await daemon.unregister(bundleIdentifier: $0, purpose: $1) })
            try await NIOThreadPool.singleton.runIfActive {
                try Data((subscription.json + "\n").utf8).write(to: subscriptionFile, options: .atomic)
            }
            return DemoWebApp.Files(subscriptionFile: subscriptionFile.path, vapidKeyFile: keyFile.path)
        } catch {
            logger.error("Could not subscribe the demo web app", metadata: ["error": "\(error)"])
            return nil
        }
    }
}

extension Optional {
    /// The wrapped value's transformation by an async function that may give none.
    fileprivate func asyncFlatMap<T>(_ transform: (Wrapped) async -> T?) async -> T? {
        guard let self else { return nil }
        return await transform(self)
    }
}
