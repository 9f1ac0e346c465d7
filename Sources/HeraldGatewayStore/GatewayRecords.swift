import Foundation
import HeraldCore

/// A provider signing key's public half, registered with `herald keys create|import`.
public struct ProviderKeyRecord: Sendable, Equatable {
    /// The 10-character key ID (`kid`).
    public var keyID: String
    /// The team the key belongs to (`iss`).
    public var teamID: String
    /// The P-256 public key, PEM.
    public var publicKeyPEM: String
    /// The one environment the key may push to, or `nil` for both.
    public var environment: APNsEnvironment?
    /// The topics (bundle IDs) the key may push to, or empty for every topic of the team.
    public var topics: [String]
    /// When it was registered.
    public var createdAt: Date

    /// Creates a record.
    public init(
        keyID: String, teamID: String, publicKeyPEM: String, environment: APNsEnvironment? = nil,
        topics: [String] = [], createdAt: Date
    ) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyPEM = publicKeyPEM
        self.environment = environment
        self.topics = topics
        self.createdAt = createdAt
    }
}

/// A device token: which device and app it addresses, in which environment, and whether it was revoked.
public struct DeviceTokenRecord: Sendable, Equatable {
    /// The token, lowercase hex.
    public var token: String
    /// The device it addresses.
    public var deviceID: String
    /// The app's bundle ID.
    public var bundleID: String
    /// The environment it was issued for (D-11).
    public var environment: APNsEnvironment
    /// When it was issued.
    public var createdAt: Date
    /// When it was revoked; pushes after that answer 410 `Unregistered` with this time.
    public var revokedAt: Date?
    /// What it was issued for: the app's notifications, VoIP, a Live Activity, push-to-start.
    public var purpose: TokenPurpose = .app

    /// A `DeviceTokenRecord` of these values (the memberwise initializer, for the gateway and the console).
    package init(
        token: String, deviceID: String, bundleID: String, environment: APNsEnvironment, createdAt: Date, revokedAt: Date? = nil,
        purpose: TokenPurpose = .app
    ) {
        self.token = token
        self.deviceID = deviceID
        self.bundleID = bundleID
        self.environment = environment
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.purpose = purpose
    }
}

/// A notification kept for an offline device (D-02…D-04).
public struct StoredNotification: Sendable, Equatable {
    /// The token it was sent to.
    public var token: String
    /// The device it is for.
    public var deviceID: String
    /// The `apns-topic`; one notification is kept per token and topic.
    public var topic: String
    /// The app's bundle ID.
    public var bundleID: String
    /// `apns-id`.
    public var apnsID: String
    /// `apns-unique-id`: its key in the delivery log.
    public var uniqueID: String
    /// The push type.
    public var pushType: APNsPushType
    /// The priority.
    public var priority: APNsPriority
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// The JSON payload as received.
    public var payload: Data
    /// When the gateway accepted it.
    public var receivedAt: Date
    /// When it expires (the provider's `apns-expiration`, or 30 days).
    public var expiresAt: Date
    /// Whether it was accepted by another gateway node for this device while it was connected (relayed, each one
    /// kept), rather than stored for an offline device (one per token and topic).
    public var relayed = false
    /// When set, the store writes the push's delivery-log events in the transaction that keeps it, so that no crash
    /// leaves a kept push without them: ``DeliveryEvent/received(_:)``, then — stored for its offline device — one
    /// ``DeliveryEvent/Kind/stored`` at this time and, for the notification it replaced, one
    /// ``DeliveryEvent/Kind/discarded``; relayed to another node, the received event alone (that node logs the
    /// delivery); refused (token revoked or unknown), none. `nil`: the caller logs.
    public var loggedAt: Date?
    /// What it was sent as, for its `received` event when the store logs it (not kept with the push).
    public var sentAs: DeliverySentAs?

    /// A `StoredNotification` of these values (the memberwise initializer, for the gateway and the console).
    package init(
        token: String, deviceID: String, topic: String, bundleID: String, apnsID: String, uniqueID: String,
        pushType: APNsPushType, priority: APNsPriority, collapseID: String? = nil, payload: Data, receivedAt: Date,
        expiresAt: Date
    ) {
        self.token = token
        self.deviceID = deviceID
        self.topic = topic
        self.bundleID = bundleID
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.pushType = pushType
        self.priority = priority
        self.collapseID = collapseID
        self.payload = payload
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
    }
}

/// One line of the delivery log (C-04): something that happened to one notification.
public struct DeliveryEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable {
        case received
        case stored
        case delivered
        case discarded
        /// A fault rule (the test-bed's faults) did something to it that is not its state: answered it late.
        case fault
    }

    /// The notification's `apns-unique-id`.
    public var uniqueID: String
    /// When it happened.
    public var at: Date
    /// What happened.
    public var kind: Kind
    /// Why, in words (the metric category of C-07 where there is one).
    public var detail: String
    /// What the notification was, on its `received` event only (the delivery log is searched by these).
    public var subject: DeliverySubject?

    /// Creates an event.
    public init(uniqueID: String, at: Date, kind: Kind, detail: String, subject: DeliverySubject? = nil) {
        self.uniqueID = uniqueID
        self.at = at
        self.kind = kind
        self.detail = detail
        self.subject = subject
    }
}

extension DeliveryEvent {
    /// What the delivery log says of a push the gateway accepted: "Received by APNs", with its subject.
    public static let receivedDetail = "Received by APNs"
    /// What it says of a push kept for its offline device.
    public static let storedDetail = "Stored - Device Offline"
    /// What it says of a kept notification that a newer one for the same device and topic replaced.
    public static let replacedDetail =
        "Discarded - Replaced: a newer notification for the same device and topic was stored"

    /// The `received` event of a notification: at its `receivedAt`, with its `apns-id`, token and topic, and what it
    /// was sent as.
    public static func received(_ n: StoredNotification) -> DeliveryEvent {
        DeliveryEvent(
            uniqueID: n.uniqueID, at: n.receivedAt, kind: .received, detail: receivedDetail,
            subject: DeliverySubject(apnsID: n.apnsID, recipient: n.token, topic: n.topic, sentAs: n.sentAs))
    }

    /// Apple's name of the state this event puts its notification in (the Push Notifications Console's): the
    /// gateway's and a device's events name it before any ":" ("Stored - Power Considerations: …").
    public var stateName: String {
        func name(_ detail: String) -> String { detail.components(separatedBy: ":").first ?? detail }
        return switch kind {
        case .received: DeliveryEvent.receivedDetail
        case .stored: detail.hasPrefix("Stored - ") ? name(detail) : DeliveryEvent.storedDetail
        case .delivered:
            detail.hasPrefix("Delivered to Device (From Storage)")
                ? "Delivered to Device (From Storage)" : "Delivered to Device"
        case .discarded, .fault: name(detail)
        }
    }

    /// The events a store writes with `n` (``StoredNotification/loggedAt``): received and stored, and the one it
    /// replaced discarded; `[]` when `n` is not logged by the store.
    public static func keeping(_ n: StoredNotification, replacing replaced: String?) -> [DeliveryEvent] {
        guard let at = n.loggedAt else { return [] }
        var events = [received(n), DeliveryEvent(uniqueID: n.uniqueID, at: at, kind: .stored, detail: storedDetail)]
        if let replaced { events.append(DeliveryEvent(uniqueID: replaced, at: at, kind: .discarded, detail: replacedDetail)) }
        return events
    }
}

/// What a notification in the delivery log was sent as: its `apns-id`, device token and topic (a broadcast has no
/// token; its channel is its subject).
public struct DeliverySubject: Sendable, Equatable {
    /// The `apns-id` (lowercased), or a broadcast's `apns-request-id`.
    public var apnsID: String
    /// The device token, or a broadcast's `apns-channel-id`.
    public var recipient: String
    /// The `apns-topic`.
    public var topic: String
    /// Its door, headers and payload; `nil` in entries logged before Herald kept them.
    public var sentAs: DeliverySentAs?

    /// Creates a subject.
    public init(apnsID: String, recipient: String, topic: String, sentAs: DeliverySentAs? = nil) {
        self.apnsID = apnsID.lowercased()
        self.recipient = recipient
        self.topic = topic
        self.sentAs = sentAs
    }
}

/// A notification the delivery log knows of: its `received` event, found by `apns-id`, token or topic.
public struct LoggedNotification: Sendable, Equatable {
    /// The `apns-unique-id`, the key of its timeline.
    public var uniqueID: String
    /// When the gateway received it.
    public var receivedAt: Date
    /// What it was sent as.
    public var subject: DeliverySubject

    /// Creates an entry.
    public init(uniqueID: String, receivedAt: Date, subject: DeliverySubject) {
        self.uniqueID = uniqueID
        self.receivedAt = receivedAt
        self.subject = subject
    }
}

/// How many delivery-log events of one kind and detail fell in one time bucket (the console's metrics).
public struct DeliveryCount: Sendable, Equatable {
    /// The bucket's start.
    public var bucket: Date
    /// What happened.
    public var kind: DeliveryEvent.Kind
    /// The event's detail (the metric category of C-07, for most).
    public var detail: String
    /// How many.
    public var count: Int

    /// Creates a count.
    public init(bucket: Date, kind: DeliveryEvent.Kind, detail: String, count: Int) {
        self.bucket = bucket
        self.kind = kind
        self.detail = detail
        self.count = count
    }
}

/// A broadcast channel (B-02…B-07): Live Activity updates published once to every device subscribed to it.
public struct BroadcastChannelRecord: Sendable, Equatable {
    /// What a channel keeps for devices that subscribe later (B-02, B-07); fixed when the channel is made.
    public enum StoragePolicy: Int, Sendable, CaseIterable {
        /// "No Message Stored": a broadcast reaches the devices subscribed at the time, and only those.
        case noMessageStored = 0
        /// "Most Recent Message Stored": the latest broadcast is kept (8 hours at most) for devices that come later.
        case mostRecentMessageStored = 1
    }

    /// The channel's ID as Apple gives it: base64 of random bytes (`apns-channel-id`).
    public var id: String
    /// The app it belongs to.
    public var bundleID: String
    /// The environment it belongs to (channels are not shared across environments, B-07).
    public var environment: APNsEnvironment
    /// What it keeps.
    public var storagePolicy: StoragePolicy
    /// Its push type; Apple's only one is `LiveActivity`.
    public var pushType: String
    /// When it was made.
    public var createdAt: Date

    /// Creates a record.
    public init(
        id: String, bundleID: String, environment: APNsEnvironment, storagePolicy: StoragePolicy,
        pushType: String = "LiveActivity", createdAt: Date
    ) {
        self.id = id
        self.bundleID = bundleID
        self.environment = environment
        self.storagePolicy = storagePolicy
        self.pushType = pushType
        self.createdAt = createdAt
    }

    /// The most channels an app may have in one environment (B-07).
    public static let limitPerApp = 10_000

    /// A new channel ID: base64 of 16 random bytes (B-02: random; B-04: never made again).
    public static func makeID() -> String {
        Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString()
    }
}

/// The latest broadcast on a channel whose policy keeps it (B-07): handed to devices that subscribe later, until it
/// expires (8 hours at most).
public struct ChannelMessage: Sendable, Equatable {
    /// The channel it was published on.
    public var channelID: String
    /// The channel's app.
    public var bundleID: String
    /// The gateway's `apns-unique-id` for it.
    public var uniqueID: String
    /// The publisher's `apns-request-id` (or the one the gateway made).
    public var requestID: String
    /// `apns-priority`.
    public var priority: Int
    /// The Live Activity payload as published.
    public var payload: Data
    /// When the gateway accepted it.
    public var receivedAt: Date
    /// When it stops being handed to devices that subscribe.
    public var expiresAt: Date

    /// Creates a record.
    public init(
        channelID: String, bundleID: String, uniqueID: String, requestID: String, priority: Int, payload: Data,
        receivedAt: Date, expiresAt: Date
    ) {
        self.channelID = channelID
        self.bundleID = bundleID
        self.uniqueID = uniqueID
        self.requestID = requestID
        self.priority = priority
        self.payload = payload
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
    }

    /// The longest a channel keeps a message (B-07).
    public static let maximumLifetime: Duration = .seconds(8 * 3600)
}
