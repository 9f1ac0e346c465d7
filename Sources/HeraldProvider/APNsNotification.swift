import Foundation
import HeraldCore

/// One notification to send: the headers of APNs §1.2 and the payload, built per push type (§1.3).
///
/// Build one with a typed constructor (``alert(bundleID:payload:)``, ``background(bundleID:custom:)``, …) so the
/// topic suffix, push type and priority are right; ``validate()`` checks what APNs would refuse before sending.
public struct APNsNotification: Sendable, Hashable {
    /// When APNs may stop trying (`apns-expiration`).
    public enum Expiration: Sendable, Hashable {
        /// No header: APNs stores it for its default (30 days, D-03).
        case storagePolicy
        /// `0`: one attempt, never stored (D-05).
        case immediately
        /// A UNIX time.
        case at(Date)
    }

    /// `apns-push-type`.
    public var pushType: APNsPushType
    /// `apns-topic`: the bundle ID plus the push type's suffix (or an MDM UID).
    public var topic: String
    /// `apns-priority`; `nil` leaves the header out (APNs then uses 10).
    public var priority: APNsPriority?
    /// `apns-expiration`.
    public var expiration: Expiration
    /// `apns-collapse-id` (at most 64 bytes).
    public var collapseID: String?
    /// `apns-id`; `nil` lets APNs generate one.
    public var apnsID: UUID?
    /// The JSON body.
    public var payload: Data

    /// Creates a notification from its parts; prefer the typed constructors.
    public init(
        pushType: APNsPushType, topic: String, priority: APNsPriority? = nil, expiration: Expiration = .storagePolicy,
        collapseID: String? = nil, apnsID: UUID? = nil, payload: Data
    ) {
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// Creates a notification of `pushType` for an app: its topic is the bundle ID plus the type's suffix.
    public init(_ pushType: APNsPushType, bundleID: String, priority: APNsPriority? = nil, payload: APNsPayload) {
        self.init(pushType: pushType, topic: bundleID + pushType.topicSuffix, priority: priority, payload: payload.jsonData())
    }

    /// A visible alert (P-01).
    public static func alert(bundleID: String, payload: APNsPayload) -> APNsNotification {
        APNsNotification(.alert, bundleID: bundleID, payload: payload)
    }

    /// A background update: `content-available: 1` only, priority 5 (P-02, Y-10).
    public static func background(bundleID: String, custom: [JSONValue.Member] = []) -> APNsNotification {
        APNsNotification(
            .background, bundleID: bundleID, priority: .throttled, payload: APNsPayload(contentAvailable: true, custom: custom))
    }

    /// A VoIP call (PushKit), topic `<bundle>.voip` (P-05).
    public static func voip(bundleID: String, payload: APNsPayload = APNsPayload()) -> APNsNotification {
        APNsNotification(.voip, bundleID: bundleID, priority: .immediate, payload: payload)
    }

    /// A watchOS complication update, topic `<bundle>.complication` (P-06).
    public static func complication(bundleID: String, payload: APNsPayload = APNsPayload()) -> APNsNotification {
        APNsNotification(.complication, bundleID: bundleID, payload: payload)
    }

    /// A File Provider change signal, topic `<bundle>.pushkit.fileprovider` (P-08).
    public static func fileProvider(bundleID: String, payload: APNsPayload = APNsPayload()) -> APNsNotification {
        APNsNotification(.fileprovider, bundleID: bundleID, payload: payload)
    }

    /// A location query, topic `<bundle>.location-query`; token authentication only (P-07).
    public static func location(bundleID: String, payload: APNsPayload = APNsPayload()) -> APNsNotification {
        APNsNotification(.location, bundleID: bundleID, priority: .immediate, payload: payload)
    }

    /// An MDM check-in nudge; the topic is the MDM certificate's UID, the payload `{"mdm": magic}` (P-09).
    public static func mdm(topic: String, pushMagic: String) -> APNsNotification {
        APNsNotification(
            pushType: .mdm, topic: topic, priority: .immediate,
            payload: Data(JSONValue.object([.init("mdm", .string(pushMagic))]).jsonText.utf8))
    }

    /// A Live Activity update, end or start, topic `<bundle>.push-type.liveactivity` (P-10, Y-11, Y-12).
    ///
    /// - Parameters:
    ///   - bundleID: The app's bundle ID (the topic gets the suffix).
    ///   - event: `update`, `end` or `start`.
    ///   - contentState: The activity's `ContentState`.
    ///   - timestamp: When the update was made (`timestamp`).
    ///   - alert: Shown with the update; required to start one.
    ///   - staleDate: When the content goes stale (`stale-date`), if ever.
    ///   - dismissalDate: When an ended activity leaves the screen (`dismissal-date`); the system's default when `nil`.
    ///   - priority: `10` to show it now, `5` to let the device choose (Apple's budget counts the `10`s).
    public static func liveActivity(
        bundleID: String, event: String, contentState: JSONValue, timestamp: Date, alert: APNsPayload.Alert? = nil,
        staleDate: Date? = nil, dismissalDate: Date? = nil, priority: APNsPriority = .immediate
    ) -> APNsNotification {
        var additional: [JSONValue.Member] = [
            .init("timestamp", .integer(Int64(timestamp.timeIntervalSince1970))), .init("event", .string(event)),
            .init("content-state", contentState),
        ]
        if let staleDate { additional.append(.init("stale-date", .integer(Int64(staleDate.timeIntervalSince1970)))) }
        if let dismissalDate {
            additional.append(.init("dismissal-date", .integer(Int64(dismissalDate.timeIntervalSince1970))))
        }
        return APNsNotification(
            .liveactivity, bundleID: bundleID, priority: priority, payload: APNsPayload(alert: alert, additionalAPS: additional))
    }

    /// A Push to Talk update, topic `<bundle>.voip-ptt` (P-11).
    public static func pushToTalk(bundleID: String, payload: APNsPayload = APNsPayload()) -> APNsNotification {
        APNsNotification(.pushtotalk, bundleID: bundleID, priority: .immediate, payload: payload)
    }

    /// A widget reload, `{"aps":{"content-changed":true}}`, topic `<bundle>.push-type.widgets`.
    public static func widgets(bundleID: String) -> APNsNotification {
        APNsNotification(
            .widgets, bundleID: bundleID, payload: APNsPayload(additionalAPS: [.init("content-changed", true)]))
    }

    /// A controls reload, `{"aps":{"content-changed":true}}`, topic `<bundle>.push-type.controls`.
    public static func controls(bundleID: String) -> APNsNotification {
        APNsNotification(
            .controls, bundleID: bundleID, payload: APNsPayload(additionalAPS: [.init("content-changed", true)]))
    }

    /// The request headers, in a fixed order, without `authorization`.
    public var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [("apns-push-type", pushType.rawValue), ("apns-topic", topic)]
        if let priority { headers.append(("apns-priority", String(priority.rawValue))) }
        switch expiration {
        case .storagePolicy: break
        case .immediately: headers.append(("apns-expiration", "0"))
        case .at(let date): headers.append(("apns-expiration", String(Int64(date.timeIntervalSince1970))))
        }
        if let collapseID { headers.append(("apns-collapse-id", collapseID)) }
        if let apnsID { headers.append(("apns-id", apnsID.uuidString.lowercased())) }
        return headers
    }

    /// Checks what APNs would refuse, before anything is sent.
    ///
    /// - Throws: The `APNsReason` (HeraldCore) APNs would answer: `PayloadTooLarge`, `PayloadEmpty`, `BadRequestPayload`,
    ///   `BadTopic`, `InvalidPushType`, `BadPriority` or `BadCollapseId`.
    public func validate() throws(APNsReason) {
        guard !payload.isEmpty else { throw .payloadEmpty }
        guard payload.count <= pushType.maximumPayloadSize else { throw .payloadTooLarge }
        // The gateway's own check: RFC 8259 (JSONSerialization alone would let a trailing comma through).
        guard payload.withUnsafeBytes(JSONSyntax.isPayloadObject) else { throw .badRequestPayload }
        guard APNsRequestHeaders.isValidTopic(topic) else { throw .badTopic }
        guard pushType.acceptsTopicSuffix(APNsPushType.split(topic: topic).suffixType) else { throw .invalidPushType }
        if let priority, !pushType.allows(priority) { throw .badPriority }
        if let collapseID, collapseID.utf8.count > APNsRequestHeaders.maximumCollapseIDSize { throw .badCollapseId }
    }
}
