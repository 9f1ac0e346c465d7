/// How a Live Activity receives updates by push.
public struct PushType: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        case token
        case channel(String)
    }

    let kind: Kind

    /// By a push token of its own (`Activity.pushTokenUpdates`), as `liveactivity` pushes to that token.
    public static let token = PushType(kind: .token)

    /// By broadcasts on the app's channel (iOS 18): the activity subscribes to it. A channel the app does not have
    /// fails the activity's start (B-14): its state turns `.dismissed`.
    ///
    /// - Parameter channelId: The channel's ID, as the channel management API gave it.
    public static func channel(_ channelId: String) -> PushType {
        PushType(kind: .channel(channelId))
    }
}
