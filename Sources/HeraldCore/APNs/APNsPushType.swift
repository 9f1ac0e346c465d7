import Foundation

/// The `apns-push-type` header's values (APNs §1.3, P-01…P-11).
public enum APNsPushType: String, CaseIterable, Sendable {
    case alert
    case background
    case complication
    case controls
    case fileprovider
    case liveactivity
    case location
    case mdm
    case pushtotalk
    case voip
    case widgets
    /// Not an APNs push type: a web push message (RFC 8030) on its way to a web app's user agent — the gateway's web
    /// push service hands it to a device as pushes of this type, so it is stored, relayed and logged as they are. The
    /// provider API refuses it in `apns-push-type` (``isProviderType``).
    case webpush

    /// Whether a provider may name this type in `apns-push-type` (every type but ``webpush``).
    public var isProviderType: Bool { self != .webpush }

    /// The push types a provider may send, in declaration order.
    public static let providerTypes = allCases.filter(\.isProviderType)

    /// What `apns-topic` must end with for this push type, after the bundle ID (P-01…P-11); empty for none.
    ///
    /// `mdm` topics are the MDM certificate's UID, not a bundle ID, so they have no suffix.
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm, .webpush: ""
        case .complication: ".complication"
        case .controls: ".push-type.controls"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .location: ".location-query"
        case .pushtotalk: ".voip-ptt"
        case .voip: ".voip"
        case .widgets: ".push-type.widgets"
        }
    }

    /// The largest payload APNs accepts for this push type, in bytes (S-11: 4096, VoIP 5120).
    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The push type whose topic suffix `topic` carries, and the bundle ID without it.
    ///
    /// A topic without a known suffix is a bundle ID for `alert`/`background`.
    /// - Parameter topic: An `apns-topic` value.
    public static func split(topic: String) -> (bundleID: String, suffixType: APNsPushType?) {
        for type in suffixedLongestFirst where topic.hasSuffix(type.topicSuffix) && topic.count > type.topicSuffix.count {
            return (String(topic.dropLast(type.topicSuffix.count)), type)
        }
        return (topic, nil)
    }

    /// The push types with a topic suffix, longest suffix first so `.voip-ptt` is not read as `.voip`.
    private static let suffixedLongestFirst = allCases.filter { !$0.topicSuffix.isEmpty }
        .sorted { $0.topicSuffix.count > $1.topicSuffix.count }

    /// Whether a topic whose suffix names `suffixType` (from ``split(topic:)``) suits this push type (P-01…P-11).
    ///
    /// `mdm` topics are certificate UIDs and suit any; the others need exactly their own suffix, or none.
    public func acceptsTopicSuffix(_ suffixType: APNsPushType?) -> Bool {
        self == .mdm || suffixType == (topicSuffix.isEmpty ? nil : self)
    }

    /// Whether this push type may be sent with `priority`: background pushes never at 10 (P-02).
    public func allows(_ priority: APNsPriority) -> Bool {
        !(self == .background && priority == .immediate)
    }

    /// The push type a payload means when no `apns-push-type` is given (S-04): `background` when it asks only to wake
    /// the app (``PayloadReading/Kind/background``: `content-available` and no alert, badge or sound); `alert` otherwise.
    ///
    /// - Parameter reading: The payload, read; `nil` when there is none to read.
    public static func inferred(from reading: PayloadReading?) -> APNsPushType {
        reading?.kind == .background ? .background : .alert
    }
}

/// The `apns-priority` header's values (S-07).
public enum APNsPriority: Int, CaseIterable, Sendable {
    /// Prioritise the device's power over everything; never wake it.
    case low = 1
    /// Send based on the device's power considerations.
    case throttled = 5
    /// Send immediately (the default).
    case immediate = 10
}

/// Apple's two APNs environments: development (sandbox) and production.
public enum APNsEnvironment: String, CaseIterable, Codable, Sendable {
    case development
    case production
}
