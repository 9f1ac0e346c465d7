import Foundation
import GRDB
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldStorage
import HeraldWebPush
import Logging

/// The device as a web app's user agent (as iOS is for Home Screen web apps): the web push subscriptions made on it
/// (`herald webpush subscribe`), their private keys (`webpush.sqlite`, never leaving the device), and the messages
/// pushed to them — decrypted (RFC 8291) and, when they are Declarative Web Push messages, shown as notifications of
/// their web app with no browser and no service worker.
///
/// A web app is named by its origin; on the device it is an app whose bundle ID is made from the origin
/// (``bundleID(for:)``), so its subscription is a device token of that app with the purpose
/// ``TokenPurpose/webPush(applicationServerKey:)``. One subscription per origin: subscribing again with the same key
/// gives the same subscription (as `PushManager.subscribe` does), with another key a new one (the old one is revoked).
package actor WebPushAgent {
    /// A subscription as `PushSubscription.toJSON()` gives it.
    package struct Subscription: Sendable, Hashable, Codable {
        struct Keys: Sendable, Hashable, Codable {
            var p256dh: String
            var auth: String
        }

        var endpoint: String
        var expirationTime: Double?
        var keys: Keys

        /// The JSON a web app's server stores (`endpoint`, `expirationTime`, `keys`), keys in that order.
        package var json: String {
            let value = JSONValue.object([
                .init("endpoint", .string(endpoint)), .init("expirationTime", .null),
                .init(
                    "keys",
                    .object([.init("p256dh", .string(keys.p256dh)), .init("auth", .string(keys.auth))])),
            ])
            return value.jsonText
        }
    }

    /// Why a subscription cannot be made.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// How many messages of a web app the record keeps (the newest).
    static let messageRecordLimit = 1000

    private var storage: LazySQLiteDatabase
    private let presenter: any NotificationPresenter
    private let clock: any HeraldClock
    private let changes: ChangeSignal
    private let logger: Logger

    /// An agent keeping its subscriptions at `url` (in memory when `nil`), showing messages with `presenter`.
    ///
    /// - Parameters:
    ///   - url: The file (`webpush.sqlite`); in memory when `nil`.
    ///   - presenter: What shows a message.
    ///   - clock: What dates a message.
    ///   - changes: Signalled when a message is recorded (the test-bed API's waits watch it).
    ///   - logger: Where it says what it did.
    init(
        url: URL?, presenter: any NotificationPresenter, clock: any HeraldClock, changes: ChangeSignal = ChangeSignal(),
        logger: Logger
    ) {
        self.storage = LazySQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
        self.presenter = presenter
        self.clock = clock
        self.changes = changes
        self.logger = logger
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE subscription (
                        origin TEXT PRIMARY KEY,
                        bundle_id TEXT NOT NULL,
                        token TEXT NOT NULL UNIQUE,
                        endpoint TEXT NOT NULL,
                        application_server_key TEXT,
                        private_key BLOB NOT NULL,
                        auth_secret BLOB NOT NULL,
                        created_at REAL NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v2: messages") { db in
            // Each message pushed to a subscription and what became of it (a WebPushMessageRecord), the newest 1,000 of
            // each web app; a message delivered again (its acknowledgement lost) is recognised by its delivery ID.
            try db.execute(
                sql: """
                    CREATE TABLE message (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        delivery_id TEXT NOT NULL UNIQUE,
                        bundle_id TEXT NOT NULL,
                        origin TEXT,
                        received_at REAL NOT NULL,
                        state TEXT NOT NULL,
                        reason TEXT,
                        data TEXT
                    );
                    CREATE INDEX message_by_app ON message(bundle_id, seq);
                    """)
        }
        return migrator
    }

    // MARK: Subscribing

    /// What every web app's bundle ID on the device starts with.
    static let bundleIDPrefix = "webapp."

    /// The bundle ID a web app has on the device: `webapp.` and the origin's host (and `-<port>` for another port
    /// than the scheme's, `http.` before the host for `http:`), e.g. `webapp.news.example.com`.
    static func bundleID(for origin: URLComponents) -> String {
        let host = (origin.host ?? "").lowercased()
        let scheme = origin.scheme?.lowercased() ?? "https"
        let port = origin.port.flatMap { ($0 == 443 && scheme == "https") || ($0 == 80 && scheme == "http") ? nil : $0 }
        let name = host.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "-" }
        return bundleIDPrefix + (scheme == "http" ? "http." : "") + String(name) + (port.map { "-\($0)" } ?? "")
    }

    /// Reads a web app's origin: `https://host[:port]` (or `http://` on a loopback host, a secure context as browsers
    /// have it), no path.
    static func origin(_ text: String) throws(Refusal) -> (origin: String, components: URLComponents) {
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty, components.user == nil, components.query == nil,
            components.fragment == nil, components.path.isEmpty || components.path == "/"
        else {
            throw Refusal(description: "\(text) is not an origin: give scheme, host and port only, e.g. https://news.example.com")
        }
        let loopback = ["localhost", "127.0.0.1", "[::1]", "::1"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw Refusal(
                description: "\(text) is not a secure context: web push needs https:// (http:// only on localhost)")
        }
        components.scheme = scheme
        components.host = host.lowercased()
        components.path = ""
        let origin = "\(scheme)://\(components.host!)" + (components.port.map { ":\($0)" } ?? "")
        return (origin, components)
    }

    /// Makes (or gives again) the web app's subscription.
    ///
    /// - Parameters:
    ///   - originText: The web app's origin.
    ///   - applicationServerKey: The app server's VAPID public key, base64url (65 bytes, a P-256 point), or `nil`.
    ///   - serviceOrigin: The push service's origin (the gateway's device port, `https://host:port`).
    ///   - issueToken: Gets the app's token for a purpose from the gateway; `revokeToken` revokes one.
    package func subscribe(
        origin originText: String, applicationServerKey: String?, serviceOrigin: String,
        issueToken: @Sendable (_ bundleID: String, TokenPurpose) async throws -> String,
        revokeToken: @Sendable (_ bundleID: String, TokenPurpose) async throws -> Void
    ) async throws -> Subscription {
        let (origin, components) = try Self.origin(originText)
        if let applicationServerKey {
            guard let key = Data(base64URLEncoded: applicationServerKey), key.count == 65,
                VAPIDAuthorization.isPublicKey(key)
            else {
                throw Refusal(
                    description:
                        "--application-server-key is not a P-256 public key: give the VAPID key's 65 bytes, base64url (the applicationServerKey a page passes to subscribe)"
                )
            }
        }
        let bundleID = Self.bundleID(for: components)
        let existing = try await database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM subscription WHERE origin = ?", arguments: [origin])
                .map(SubscriptionRow.init)
        }
        if let existing, existing.applicationServerKey == applicationServerKey {
            return Self.subscription(endpoint: existing.endpoint, keys: try existing.keys())
        }
        if let existing {
            try await revokeToken(bundleID, .webPush(applicationServerKey: existing.applicationServerKey))
        }
        let token = try await issueToken(bundleID, .webPush(applicationServerKey: applicationServerKey))
        guard let deviceToken = DeviceToken(hex: token) else {
            throw Refusal(description: "the gateway gave a token that is not hex: \(token)")
        }
        let endpoint = WebPushEndpoint(token: deviceToken).url(origin: serviceOrigin)
        let keys = WebPushCipher.UserAgentKeys()
        let now = clock.now
        try await database.groupCommit.write { db in
            try db.execute(sql: "DELETE FROM subscription WHERE origin = ? OR token = ?", arguments: [origin, token])
            try db.execute(
                sql: """
                    INSERT INTO subscription (origin, bundle_id, token, endpoint, application_server_key, private_key,
                        auth_secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    origin, bundleID, token, endpoint, applicationServerKey, keys.rawPrivateKey,
                    keys.authSecret, now.timeIntervalSince1970,
                ])
        }
        logger.info(
            "Web push subscription made",
            metadata: ["webpush.origin": "\(origin)", "app.bundle_id": "\(bundleID)", "webpush.endpoint": "\(endpoint)"])
        return Self.subscription(endpoint: endpoint, keys: keys)
    }

    /// A subscription as kept: read inside the database's read (a GRDB `Row` cannot leave it, so that the read is the
    /// asynchronous one and no task thread waits for the database).
    private struct SubscriptionRow: Sendable {
        var origin: String
        var endpoint: String
        var applicationServerKey: String?
        var privateKey: Data
        var authSecret: Data

        init(_ row: Row) {
            origin = row["origin"]
            endpoint = row["endpoint"]
            applicationServerKey = row["application_server_key"]
            privateKey = row["private_key"]
            authSecret = row["auth_secret"]
        }

        func keys() throws -> WebPushCipher.UserAgentKeys {
            try WebPushCipher.UserAgentKeys(rawPrivateKey: privateKey, authSecret: authSecret)
        }
    }

    private static func subscription(endpoint: String, keys: WebPushCipher.UserAgentKeys) -> Subscription {
        let public_ = keys.subscription
        return Subscription(
            endpoint: endpoint, expirationTime: nil,
            keys: .init(p256dh: public_.p256dh.base64URLEncodedString(), auth: public_.auth.base64URLEncodedString()))
    }

    // MARK: Messages

    /// What became of a message.
    enum Outcome: Sendable, Equatable {
        /// Shown as a notification of its web app.
        case shown(origin: String, DeclarativeWebPushMessage)
        /// Not shown: no subscription holds its token, it cannot be decrypted, or it is not declarative (a service
        /// worker would handle it; there is none on this device). Logged.
        case dropped(String)
    }

    /// Decrypts a message pushed to one of the subscriptions and shows it when it is a Declarative Web Push message.
    @discardableResult
    func receive(_ push: DevicePush) async throws -> Outcome {
        let token = push.token
        let row = try await database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM subscription WHERE token = ?", arguments: [token])
                .map(SubscriptionRow.init)
        }
        let metadata: Logger.Metadata = ["push.delivery_id": "\(push.deliveryID)", "app.bundle_id": "\(push.bundleID)"]
        guard let row else {
            logger.warning("A web push for a subscription this device no longer has; dropped", metadata: metadata)
            try await record(push, origin: nil, state: .dropped, reason: .noSubscription)
            return .dropped("no subscription")
        }
        let origin = row.origin
        let keys = try row.keys()
        guard !push.payload.isEmpty else {
            logger.info(
                "A web push without data: a service worker's push event would run; there is none",
                metadata: metadata.merging(["webpush.origin": "\(origin)"]) { $1 })
            try await record(push, origin: origin, state: .dropped, reason: .noData)
            return .dropped("no data")
        }
        let plaintext: Data
        do {
            plaintext = try WebPushCipher.decrypt(Data(base64URLEncoded: push.payload) ?? Data(), with: keys)
        } catch {
            logger.warning(
                "A web push cannot be decrypted with its subscription's keys; dropped",
                metadata: metadata.merging(["webpush.origin": "\(origin)", "error": "\(error)"]) { $1 })
            try await record(push, origin: origin, state: .dropped, reason: .undecryptable)
            return .dropped("undecryptable")
        }
        let message: DeclarativeWebPushMessage
        do {
            message = try DeclarativeWebPushMessage(payload: plaintext)
        } catch {
            logger.info(
                "A web push that is not a Declarative Web Push message needs a service worker; there is none on this device",
                metadata: metadata.merging(["webpush.origin": "\(origin)", "webpush.reason": "\(error)"]) { $1 })
            try await record(push, origin: origin, state: .dropped, reason: .notDeclarative, data: plaintext)
            return .dropped("not declarative")
        }
        // Recorded before it is shown: a message delivered again (its acknowledgement lost) is not shown twice.
        guard try await record(push, origin: origin, state: .shown, data: plaintext) else {
            logger.info("A web push shown before came again; not shown twice", metadata: metadata)
            return .dropped("received before")
        }
        await presenter.present(
            NotificationPresentation(
                bundleIdentifier: origin, identifier: push.deliveryID, title: message.title, subtitle: "",
                body: message.body ?? "", soundName: message.silent ? nil : "default",
                badge: message.appBadge.map { Int(clamping: $0) }, categoryIdentifier: "", threadIdentifier: "",
                actions: [], attachmentPaths: [], date: clock.now,
                style: .init(banner: true, list: true, sound: !message.silent, badge: message.appBadge != nil),
                deliveredWhileNotRunning: false))
        logger.info(
            "Web push shown",
            metadata: metadata.merging(["webpush.origin": "\(origin)", "webpush.navigate": "\(message.navigate)"]) { $1 })
        return .shown(origin: origin, message)
    }

    /// Records a message and what became of it; `false` when its delivery was recorded before (it came again).
    @discardableResult
    private func record(
        _ push: DevicePush, origin: String?, state: WebPushMessageRecord.State,
        reason: WebPushMessageRecord.Reason? = nil, data: Data? = nil
    ) async throws -> Bool {
        let (at, limit) = (clock.now.timeIntervalSince1970, Self.messageRecordLimit)
        let text = data.flatMap { String(data: $0, encoding: .utf8) }
        let recorded = try await database.groupCommit.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO message (delivery_id, bundle_id, origin, received_at, state, reason, data)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [push.deliveryID, push.bundleID, origin, at, state.rawValue, reason?.rawValue, text])
            guard db.changesCount > 0 else { return false }
            try db.execute(
                sql: """
                    DELETE FROM message WHERE bundle_id = ? AND seq <= (
                        SELECT seq FROM message WHERE bundle_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                    """,
                arguments: [push.bundleID, push.bundleID, limit])
            return true
        }
        if recorded { changes.changed() }
        return recorded
    }

    /// Every message this agent recorded, every web app's, oldest first.
    func messages() async throws -> [WebPushMessageRecord] {
        try await Self.messages(in: database)
    }

    /// Every message recorded in `database`, every web app's, oldest first.
    static func messages(in database: SQLiteDatabase) async throws -> [WebPushMessageRecord] {
        try await database.writer.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT delivery_id, bundle_id, origin, received_at, state, reason, data FROM message ORDER BY seq"
            ).map { row in
                WebPushMessageRecord(
                    bundleIdentifier: row[1], uniqueID: row[0], origin: row[2],
                    receivedAt: Date(timeIntervalSince1970: row[3]),
                    state: WebPushMessageRecord.State(rawValue: row[4]) ?? .dropped,
                    reason: (row[5] as String?).flatMap(WebPushMessageRecord.Reason.init(rawValue:)), data: row[6])
            }
        }
    }

    private var database: SQLiteDatabase {
        get throws { try storage.open() }
    }
}
