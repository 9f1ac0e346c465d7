import Foundation

/// What a device token was issued for: an app's notifications, its PushKit VoIP pushes, one Live Activity, the
/// push-to-start of one kind of Live Activity, the app's widgets, one kind of its controls, a web push subscription, or
/// one of the other push types with a token of their own (location, complication, File Provider, Push to Talk, MDM).
///
/// Apple issues each of these as a token of its own (ActivityKit's `pushToken` and `pushToStartToken`, PushKit's
/// credentials, WidgetKit's `WidgetPushInfo` and `ControlPushInfo`); the gateway keeps one active token per device,
/// app, environment and purpose.
///
/// Apple answers `400 DeviceTokenNotForTopic` when a push goes to a token issued for another purpose (a PushKit token
/// is not the app's APNs token), and so does the gateway: an app's token takes `alert` and `background` pushes only;
/// a VoIP token `voip`; a Live Activity or push-to-start token `liveactivity`; a widgets token `widgets`; a control's
/// token `controls`; a token made for one of the ``separateTokenTypes`` that type. A web push subscription's token
/// takes only the web push service's messages: any APNs push to it is refused so.
public enum TokenPurpose: Sendable, Hashable, CustomStringConvertible {
    /// The app's notifications (`registerForRemoteNotifications`).
    case app
    /// PushKit VoIP pushes (`PKPushRegistry` with `.voIP`; topic `<bundle>.voip`).
    case voip
    /// One Live Activity's updates (`Activity.pushToken`), named by the activity's ID.
    case liveActivity(activityID: String)
    /// Starting Live Activities of one attributes type (`Activity.pushToStartToken`), named by the type.
    case pushToStart(attributesType: String)
    /// Reloading the app's widgets (`WidgetPushInfo.token`, iOS 26; topic `<bundle>.push-type.widgets`).
    case widgets
    /// Reloading one kind of the app's controls (`ControlPushInfo.token`, iOS 18; topic `<bundle>.push-type.controls`).
    case control(kind: String)
    /// A web push subscription of a web app on the device (`PushManager.subscribe`), bound to the
    /// `applicationServerKey` it was made with (base64url, 65 bytes decoded) when it was made with one. Its endpoint is
    /// `/push/<the token's bytes, base64url>` on the gateway's device port; only the web push service sends to it.
    case webPush(applicationServerKey: String?)
    /// A token for one of the ``separateTokenTypes``: a Location Push Service extension's (`location`), a watch
    /// complication's (`complication`), a File Provider extension's (`fileprovider`), a Push to Talk channel's
    /// (`pushtotalk`) or the device's MDM enrolment (`mdm`). Herald's device does not ask for these itself;
    /// `herald tokens create --purpose <type>` makes one, so a provider's code for these pushes can be tested.
    case pushType(APNsPushType)

    /// The push types that go to a token of their own that Herald's device does not ask for itself (see
    /// ``pushType(_:)``).
    public static let separateTokenTypes: Set<APNsPushType> = [.location, .complication, .fileprovider, .pushtotalk, .mdm]

    /// The stored and wire form: empty for ``app``, `voip`, `liveactivity:<id>`, `pushtostart:<type>`, `widgets`,
    /// `control:<kind>`, `webpush`, `webpush:<applicationServerKey>`, or the push type's name for a ``pushType(_:)``.
    public var rawValue: String {
        switch self {
        case .app: ""
        case .voip: "voip"
        case .liveActivity(let id): "liveactivity:" + id
        case .pushToStart(let type): "pushtostart:" + type
        case .widgets: "widgets"
        case .control(let kind): "control:" + kind
        case .webPush(let key): key.map { "webpush:" + $0 } ?? "webpush"
        case .pushType(let type): type.rawValue
        }
    }

    /// Reads the stored form; `nil` for anything else (an empty name after the colon included).
    public init?(rawValue: String) {
        if rawValue.isEmpty {
            self = .app
        } else if rawValue == "voip" {
            self = .voip
        } else if rawValue.hasPrefix("liveactivity:"), rawValue.count > 13, rawValue.utf8.count <= 256 {
            self = .liveActivity(activityID: String(rawValue.dropFirst(13)))
        } else if rawValue.hasPrefix("pushtostart:"), rawValue.count > 12, rawValue.utf8.count <= 256 {
            self = .pushToStart(attributesType: String(rawValue.dropFirst(12)))
        } else if rawValue == "widgets" {
            self = .widgets
        } else if rawValue.hasPrefix("control:"), rawValue.count > 8, rawValue.utf8.count <= 256 {
            self = .control(kind: String(rawValue.dropFirst(8)))
        } else if rawValue == "webpush" {
            self = .webPush(applicationServerKey: nil)
        } else if rawValue.hasPrefix("webpush:"), rawValue.count > 8, rawValue.utf8.count <= 256 {
            self = .webPush(applicationServerKey: String(rawValue.dropFirst(8)))
        } else if let type = APNsPushType(rawValue: rawValue), Self.separateTokenTypes.contains(type) {
            self = .pushType(type)
        } else {
            return nil
        }
    }

    public var description: String { self == .app ? "app" : rawValue }

    /// Whether it is a web push subscription's, whatever its key.
    public var isWebPush: Bool {
        if case .webPush = self { true } else { false }
    }

    /// Whether a push of `pushType` may be sent to a token of this purpose (see above).
    public func accepts(_ pushType: APNsPushType) -> Bool {
        switch self {
        case .app: pushType == .alert || pushType == .background
        case .voip: pushType == .voip
        case .liveActivity, .pushToStart: pushType == .liveactivity
        case .widgets: pushType == .widgets
        case .control: pushType == .controls
        case .webPush: pushType == .webpush
        case .pushType(let type): pushType == type
        }
    }
}
