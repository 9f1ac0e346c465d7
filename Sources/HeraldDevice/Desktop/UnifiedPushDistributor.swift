import Crypto
import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import HeraldWebPush
import Logging
import ServiceLifecycle

/// The device as a UnifiedPush distributor on the session bus (UnifiedPush's D-Bus specification, DBUS_0.3.0): Linux
/// apps (NeoChat, Tuba, Nextcloud Neon, every `unifiedpush_linux` app) register with it and get a Herald web push
/// endpoint; what their servers post there comes back to them over D-Bus.
///
/// It owns `org.unifiedpush.Distributor.herald` and serves `org.unifiedpush.Distributor2` at
/// `/org/unifiedpush/Distributor`. A registration (`Register`: `service`, `token`, `description`, `vapid`) is a device
/// token of the purpose ``TokenPurpose/webPush(applicationServerKey:)`` for an app of its own (the connector's service
/// name and `.up-` with a digest of its token, so two registrations of one app are two subscriptions); its endpoint is
/// that token's ``WebPushEndpoint``. The app is told it with `org.unifiedpush.Connector2.NewEndpoint`, every time it
/// registers. A message is the POST's body as it came — RFC 8291-encrypted by the app's server, decrypted by the app
/// — given to `Connector2.Message` as `ay` (as KUnifiedPush gives it) with the push's delivery ID as `id`.
///
/// Nothing accepted is lost: a message is kept (`unifiedpush.sqlite`) before the gateway is told it arrived, and given
/// to the app until the app answers its `Message` call — when the app is not on the bus (and the bus cannot start it),
/// the message waits until its name appears (`NameOwnerChanged`) or the distributor starts again. A message delivered
/// again by the gateway is recognised by its delivery ID and not given twice.
package actor UnifiedPushDistributor {
    /// The bus name every distributor's starts with (the D-Bus specification's).
    static let busNamePrefix = "org.unifiedpush.Distributor."
    static let distributorPath = "/org/unifiedpush/Distributor"
    static let distributorInterface = "org.unifiedpush.Distributor2"
    static let connectorPath = "/org/unifiedpush/Connector"
    static let connectorInterface = "org.unifiedpush.Connector2"

    /// One app's registration.
    struct Registration: Sendable, Hashable {
        /// The connection token the app chose.
        var token: String
        /// The app's D-Bus service name.
        var service: String
        var description: String?
        /// The app server's VAPID public key (base64url), if the app gave one.
        var vapid: String?
        /// The app the subscription belongs to at the gateway.
        var bundleID: String
        /// The subscription's device token (hex).
        var deviceToken: String
        /// The push endpoint the app's server posts to.
        var endpoint: String
    }

    /// The bus name this distributor owns: `org.unifiedpush.Distributor.` and its name.
    package nonisolated let busName: String
    private let busAddress: String
    private let gateway: any GatewayLink
    private let serviceOrigin: String
    private let clock: any HeraldClock
    private let logger: Logger
    private var storage: LazySQLiteDatabase
    private var bus: DBusConnection?
    /// Services whose messages are being given right now, and whether more came meanwhile.
    private var delivering: [String: Bool] = [:]
    private let wakeups: AsyncStream<String>
    private let wake: AsyncStream<String>.Continuation

    /// A distributor on the bus at `busAddress`.
    ///
    /// - Parameters:
    ///   - busAddress: The session bus's address (`DBUS_SESSION_BUS_ADDRESS`).
    ///   - name: Its name on the bus, after `org.unifiedpush.Distributor.`.
    ///   - url: Where the registrations and the messages not yet given are kept (in memory when `nil`).
    ///   - gateway: Issues and revokes the subscriptions' tokens.
    ///   - serviceOrigin: The push service's origin (the gateway's device port, `https://host:port`).
    ///   - clock: The device's clock.
    ///   - logger: Where it logs.
    init(
        busAddress: String, name: String = "herald", url: URL?, gateway: any GatewayLink, serviceOrigin: String,
        clock: any HeraldClock, logger: Logger
    ) {
        self.busAddress = busAddress
        self.busName = Self.busNamePrefix + name
        self.gateway = gateway
        self.serviceOrigin = serviceOrigin
        self.clock = clock
        self.logger = logger
        self.storage = LazySQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
        // A wake-up asks for every waiting message of its app: dropping the oldest of many loses nothing.
        (wakeups, wake) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(256))
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE registration (
                        token TEXT PRIMARY KEY,
                        service TEXT NOT NULL,
                        description TEXT,
                        vapid TEXT,
                        bundle_id TEXT NOT NULL,
                        device_token TEXT NOT NULL UNIQUE,
                        endpoint TEXT NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE message (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        token TEXT NOT NULL,
                        delivery_id TEXT NOT NULL UNIQUE,
                        body BLOB NOT NULL,
                        received_at REAL NOT NULL,
                        given_at REAL
                    );
                    CREATE INDEX message_waiting ON message (token, id) WHERE given_at IS NULL;
                    """)
        }
        return migrator
    }

    private var database: SQLiteDatabase {
        get throws { try storage.open() }
    }

    // MARK: Running

    /// Serves the bus until the device stops. Without a bus, or with the name taken by another distributor, it logs why
    /// and waits: the device runs without UnifiedPush.
    package func run() async throws {
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(address: busAddress, servesObjects: true)
        } catch {
            logger.warning(
                "No UnifiedPush distributor: the session bus cannot be reached", metadata: ["error": "\(error)"])
            try? await gracefulShutdown()
            return
        }
        do {
            guard try await bus.requestName(busName) else {
                logger.warning(
                    "No UnifiedPush distributor: another process owns its name on the session bus",
                    metadata: ["dbus.name": "\(busName)"])
                bus.close()
                try? await gracefulShutdown()
                return
            }
            try await bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        } catch {
            bus.close()
            logger.warning("No UnifiedPush distributor: the session bus refused it", metadata: ["error": "\(error)"])
            try? await gracefulShutdown()
            return
        }
        self.bus = bus
        logger.info("UnifiedPush distributor on the session bus", metadata: ["dbus.name": "\(busName)"])
        let waiting = (try? await servicesWithWaitingMessages()) ?? []
        for service in waiting { wake.yield(service) }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withDiscardingTaskGroup { group in
                    group.addTask {
                        await withDiscardingTaskGroup { calls in
                            for await call in bus.methodCalls {
                                calls.addTask { await self.handle(call, on: bus) }
                            }
                        }
                        // The bus closed (shutdown, or the bus went away): no more deliveries either.
                        self.wake.finish()
                    }
                    group.addTask {
                        for await signal in bus.signals where signal.member == "NameOwnerChanged" {
                            guard signal.body.count == 3, case .string(let name) = signal.body[0],
                                case .string(let newOwner) = signal.body[2], !newOwner.isEmpty
                            else { continue }
                            await self.serviceAppeared(name)
                        }
                    }
                    group.addTask {
                        await withDiscardingTaskGroup { deliveries in
                            for await service in self.wakeups {
                                deliveries.addTask { await self.deliver(to: service) }
                            }
                        }
                    }
                }
            } onCancel: {
                bus.close()
            }
        } onGracefulShutdown: {
            bus.close()
        }
        self.bus = nil
        // Returning early would stop the device's other services: wait for the device to stop.
        if !Task.isCancelled, !Task.isShuttingDownGracefully {
            logger.warning("The session bus closed: the UnifiedPush distributor has stopped until the device restarts")
            try? await gracefulShutdown()
        }
    }

    private func serviceAppeared(_ name: String) async {
        let known =
            (try? await database.writer.read { db in
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM registration WHERE service = ?)", arguments: [name])
            }) ?? nil
        if known == true { wake.yield(name) }
    }

    // MARK: Registering

    /// What `Register` and `Unregister` were given.
    private struct Arguments {
        var values: [String: DBusMessage.Value] = [:]

        init(_ call: DBusMessage) {
            guard case .dictionary(let entries)? = call.body.first else { return }
            for (key, value) in entries where values[key] == nil { values[key] = value }
        }

        func string(_ key: String) -> String? {
            if case .string(let text)? = values[key] { text } else { nil }
        }
    }

    private func handle(_ call: DBusMessage, on bus: DBusConnection) async {
        switch (call.interface, call.member) {
        case (Self.distributorInterface, "Register"):
            let answer = await register(Arguments(call), on: bus)
            switch answer {
            case .failure(let name, let message):
                bus.replyError(to: call, name: name, message: message)
            case .answer(let body, let afterwards):
                bus.reply(to: call, body: [.dictionary(body)])
                afterwards?()
            }
        case (Self.distributorInterface, "Unregister"):
            await unregister(Arguments(call), on: bus)
            bus.reply(to: call)
        case ("org.freedesktop.DBus.Introspectable", "Introspect") where call.path == Self.distributorPath:
            bus.reply(to: call, body: [.string(Self.introspection)])
        case ("org.freedesktop.DBus.Peer", "Ping"):
            bus.reply(to: call)
        default:
            bus.replyError(
                to: call, name: "org.freedesktop.DBus.Error.UnknownMethod",
                message: "\(busName) has no \(call.interface ?? "").\(call.member ?? "") at \(call.path ?? "")")
        }
    }

    private enum Answer {
        case answer([(String, DBusMessage.Value)], then: (@Sendable () -> Void)?)
        case failure(name: String, message: String)

        static func failed(_ reason: String) -> Answer {
            .answer([("success", .string("REGISTRATION_FAILED")), ("reason", .string(reason))], then: nil)
        }
    }

    private func register(_ arguments: Arguments, on bus: DBusConnection) async -> Answer {
        guard let service = arguments.string("service"), Self.isBusName(service) else {
            return .failure(
                name: "org.freedesktop.DBus.Error.InvalidArgs",
                message: "Register needs \"service\": the app's D-Bus service name (e.g. org.example.Chat)")
        }
        guard let token = arguments.string("token"), !token.isEmpty, token.utf8.count <= 100 else {
            return .failure(
                name: "org.freedesktop.DBus.Error.InvalidArgs",
                message: "Register needs \"token\": 1 to 100 bytes the app chose (a UUID, say)")
        }
        let vapid = arguments.string("vapid").flatMap { $0.isEmpty ? nil : $0 }
        if let vapid {
            guard let key = Data(base64URLEncoded: vapid), key.count == 65, VAPIDAuthorization.isPublicKey(key) else {
                return .failure(
                    name: "org.freedesktop.DBus.Error.InvalidArgs",
                    message: "\"vapid\" is not a P-256 public key: give its 65 bytes (uncompressed), base64url")
            }
        }
        let description = arguments.string("description")
        let metadata: Logger.Metadata = ["unifiedpush.service": "\(service)"]
        do {
            let existing = try await registration(token: token)
            if let existing, existing.service != service {
                return .failure(
                    name: "org.freedesktop.DBus.Error.InvalidArgs",
                    message: "The token is another app's registration: choose a new random token")
            }
            let registration: Registration
            if let existing, existing.vapid == vapid {
                registration = existing
            } else {
                if let existing {
                    try await gateway.unregister(
                        bundleIdentifier: existing.bundleID, purpose: .webPush(applicationServerKey: existing.vapid))
                }
                let bundleID = Self.bundleID(service: service, token: token)
                let deviceTokenText = try await gateway.register(
                    bundleIdentifier: bundleID, purpose: .webPush(applicationServerKey: vapid))
                guard let deviceToken = DeviceToken(hex: deviceTokenText) else { return .failed("INTERNAL_ERROR") }
                registration = Registration(
                    token: token, service: service, description: description, vapid: vapid, bundleID: bundleID,
                    deviceToken: deviceTokenText, endpoint: WebPushEndpoint(token: deviceToken).url(origin: serviceOrigin))
                let now = clock.now.timeIntervalSince1970
                try await database.groupCommit.write { db in
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO registration (token, service, description, vapid, bundle_id,
                                device_token, endpoint, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            token, service, description, vapid, bundleID, deviceTokenText, registration.endpoint, now,
                        ])
                }
                logger.info(
                    "UnifiedPush app registered",
                    metadata: metadata.merging([
                        "app.bundle_id": "\(bundleID)", "webpush.endpoint": "\(registration.endpoint)",
                    ]) { $1 })
            }
            let endpoint = registration.endpoint
            return .answer(
                [("success", .string("REGISTRATION_SUCCEEDED"))],
                then: {
                    // The specification: NewEndpoint after every successful Register, new token or not.
                    bus.send(
                        destination: service, path: Self.connectorPath, interface: Self.connectorInterface,
                        member: "NewEndpoint", body: [.dictionary([("token", .string(token)), ("endpoint", .string(endpoint))])])
                })
        } catch DeviceDaemon.RegistrationError.notConnected {
            logger.warning("A UnifiedPush registration failed: no gateway connection", metadata: metadata)
            return .failed("NETWORK")
        } catch {
            logger.error("A UnifiedPush registration failed", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            return .failed("INTERNAL_ERROR")
        }
    }

    private func unregister(_ arguments: Arguments, on bus: DBusConnection) async {
        guard let token = arguments.string("token"),
            let existing = try? await registration(token: token)
        else { return }
        do {
            try await gateway.unregister(
                bundleIdentifier: existing.bundleID, purpose: .webPush(applicationServerKey: existing.vapid))
        } catch {
            // The endpoint stays valid at the gateway; what is posted to it is dropped here, having no registration.
            logger.warning(
                "A UnifiedPush registration's subscription could not be revoked at the gateway",
                metadata: ["unifiedpush.service": "\(existing.service)", "error": "\(error)"])
        }
        do {
            try await database.groupCommit.write { db in
                try db.execute(sql: "DELETE FROM registration WHERE token = ?", arguments: [token])
                try db.execute(sql: "DELETE FROM message WHERE token = ?", arguments: [token])
            }
        } catch {
            logger.error("Could not forget a UnifiedPush registration", metadata: ["error": "\(error)"])
            return
        }
        logger.info("UnifiedPush app unregistered", metadata: ["unifiedpush.service": "\(existing.service)"])
        bus.send(
            destination: existing.service, path: Self.connectorPath, interface: Self.connectorInterface,
            member: "Unregistered", body: [.dictionary([("token", .string(token))])])
    }

    /// The app a registration's subscription belongs to at the gateway: the service name (made a bundle ID) and `.up-`
    /// with 12 hex digits of the token's SHA-256.
    static func bundleID(service: String, token: String) -> String {
        let name = String(service.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "-" })
        let digest = SHA256.hash(data: Data(token.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
        return "\(name).up-\(digest)"
    }

    /// Whether `name` is a well-known D-Bus name: dot-separated elements of letters, digits, `_` and `-`, not starting
    /// with a digit, at least two, at most 255 bytes.
    static func isBusName(_ name: String) -> Bool {
        guard name.utf8.count <= 255, !name.hasPrefix(":") else { return false }
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        return elements.count >= 2
            && elements.allSatisfy { element in
                guard let first = element.first, !first.isNumber else { return false }
                return element.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            }
    }

    /// The app's registration for `token`, if it has one.
    func registration(token: String) async throws -> Registration? {
        try await database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM registration WHERE token = ?", arguments: [token]).map(Self.registration)
        }
    }

    /// Every registration, oldest first.
    func registrations() async throws -> [Registration] {
        try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM registration ORDER BY created_at, token").map(Self.registration)
        }
    }

    private static func registration(_ row: Row) -> Registration {
        Registration(
            token: row["token"], service: row["service"], description: row["description"], vapid: row["vapid"],
            bundleID: row["bundle_id"], deviceToken: row["device_token"], endpoint: row["endpoint"])
    }

    // MARK: Messages

    /// Keeps a message pushed to one of the registrations' subscriptions and has it given to its app.
    ///
    /// - Returns: `false` when no registration holds the push's token (the message is dropped, logged).
    /// - Throws: When it cannot be kept; the gateway must send it again.
    @discardableResult
    func take(_ push: DevicePush) async throws -> Bool {
        let deviceToken = push.token
        let metadata: Logger.Metadata = ["push.delivery_id": "\(push.deliveryID)", "app.bundle_id": "\(push.bundleID)"]
        guard
            let registration = try await database.writer.read({ db in
                try Row.fetchOne(db, sql: "SELECT * FROM registration WHERE device_token = ?", arguments: [deviceToken])
                    .map(Self.registration)
            })
        else {
            logger.warning("A web push for a UnifiedPush registration this device no longer has; dropped", metadata: metadata)
            return false
        }
        guard let body = Data(base64URLEncoded: push.payload), !body.isEmpty else {
            logger.warning("A UnifiedPush message without a body; dropped (an app's message is 1–4096 bytes)", metadata: metadata)
            return false
        }
        let now = clock.now.timeIntervalSince1970
        let (token, deliveryID) = (registration.token, push.deliveryID)
        try await database.groupCommit.write { db in
            // A message given a day ago no longer needs recognising when the gateway sends it again.
            try db.execute(sql: "DELETE FROM message WHERE given_at < ?", arguments: [now - 86_400])
            try db.execute(
                sql: "INSERT OR IGNORE INTO message (token, delivery_id, body, received_at) VALUES (?, ?, ?, ?)",
                arguments: [token, deliveryID, body, now])
        }
        wake.yield(registration.service)
        return true
    }

    private func servicesWithWaitingMessages() async throws -> [String] {
        try await database.writer.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT registration.service FROM message JOIN registration USING (token)
                    WHERE message.given_at IS NULL
                    """)
        }
    }

    /// Gives the app's waiting messages to it, oldest first, each until it answers; stops at the first it does not
    /// take (the rest wait for its name to appear on the bus).
    private func deliver(to service: String) async {
        guard delivering[service] == nil else {
            delivering[service] = true
            return
        }
        delivering[service] = false
        defer { delivering[service] = nil }
        repeat {
            delivering[service] = false
            guard let bus else { return }
            let waiting: [(id: Int64, token: String, deliveryID: String, body: Data)]
            do {
                waiting = try await database.writer.read { db in
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT message.id, message.token, message.delivery_id, message.body FROM message
                            JOIN registration USING (token)
                            WHERE registration.service = ? AND message.given_at IS NULL ORDER BY message.id
                            """, arguments: [service]
                    ).map { ($0["id"], $0["token"], $0["delivery_id"], $0["body"]) }
                }
            } catch {
                logger.error("Could not read the UnifiedPush messages waiting", metadata: ["error": "\(error)"])
                return
            }
            for message in waiting {
                let metadata: Logger.Metadata = [
                    "unifiedpush.service": "\(service)", "push.delivery_id": "\(message.deliveryID)",
                ]
                do {
                    try await bus.call(
                        destination: service, path: Self.connectorPath, interface: Self.connectorInterface,
                        member: "Message",
                        body: [
                            .dictionary([
                                ("token", .string(message.token)), ("message", .bytes(Array(message.body))),
                                ("id", .string(message.deliveryID)),
                            ])
                        ])
                } catch {
                    logger.info(
                        "A UnifiedPush app did not take its message; it waits for the app to appear on the bus",
                        metadata: metadata.merging(["error": "\(error)"]) { $1 })
                    return
                }
                do {
                    let now = clock.now.timeIntervalSince1970
                    try await database.groupCommit.write { db in
                        try db.execute(sql: "UPDATE message SET given_at = ? WHERE id = ?", arguments: [now, message.id])
                    }
                    logger.info("UnifiedPush message given to its app", metadata: metadata)
                } catch {
                    logger.error(
                        "Could not note a UnifiedPush message given", metadata: metadata.merging(["error": "\(error)"]) { $1 })
                    return
                }
            }
        } while delivering[service] == true
    }

    /// The distributor object's introspection data.
    static let introspection = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" \
        "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.unifiedpush.Distributor2">
            <method name="Register">
              <arg name="args" type="a{sv}" direction="in"/>
              <arg name="res" type="a{sv}" direction="out"/>
            </method>
            <method name="Unregister">
              <arg name="args" type="a{sv}" direction="in"/>
              <annotation name="org.freedesktop.DBus.Method.NoReply" value="true"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
          </interface>
        </node>
        """
}

extension UnifiedPushDistributor: Service {}
