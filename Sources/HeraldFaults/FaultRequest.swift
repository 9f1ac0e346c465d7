/// What a request offers a fault rule's ``FaultMatch`` to compare: each is `nil` where the door has no such thing.
public struct FaultRequest: Sendable, Equatable {
    /// The device token, lowercase (hex), or the door's own token or registration.
    public var token: String?
    /// The topic (`apns-topic`).
    public var topic: String?
    /// The push type (`apns-push-type`'s value).
    public var pushType: String?
    /// The app's bundle ID.
    public var bundle: String?
    /// The request's path.
    public var path: String?
    /// The connection it came on, for a quota kept per connection.
    public var connection: UInt64?

    /// A request with these values.
    ///
    /// - Parameters:
    ///   - token: The device token, lowercase.
    ///   - topic: The topic.
    ///   - pushType: The push type.
    ///   - bundle: The app's bundle ID.
    ///   - path: The request's path.
    ///   - connection: The connection it came on.
    public init(
        token: String? = nil, topic: String? = nil, pushType: String? = nil, bundle: String? = nil, path: String? = nil,
        connection: UInt64? = nil
    ) {
        self.connection = connection
        self.token = token
        self.topic = topic
        self.pushType = pushType
        self.bundle = bundle
        self.path = path
    }
}
