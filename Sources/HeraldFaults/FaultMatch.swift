/// Which requests of its door a fault rule matches: every field given must equal the request's; none given matches
/// every request.
public struct FaultMatch: Sendable, Equatable {
    /// The device token (compared lowercase).
    public var token: String?
    /// The topic.
    public var topic: String?
    /// The push type (`alert`, `background`, `voip`, …).
    public var pushType: String?
    /// The app's bundle ID.
    public var bundle: String?
    /// The request's path, exactly.
    public var path: String?

    /// The fields a match may have, as the API names them.
    public static let fields = ["token", "topic", "pushType", "bundle", "path"]

    /// A match on these fields; none: every request.
    public init(
        token: String? = nil, topic: String? = nil, pushType: String? = nil, bundle: String? = nil, path: String? = nil
    ) {
        self.token = token?.lowercased()
        self.topic = topic
        self.pushType = pushType
        self.bundle = bundle
        self.path = path
    }

    /// Whether `request` has every value this match names (its token lowercase, as ``FaultRequest/token`` is).
    public func matches(_ request: FaultRequest) -> Bool {
        (token == nil || token == request.token) && (topic == nil || topic == request.topic)
            && (pushType == nil || pushType == request.pushType) && (bundle == nil || bundle == request.bundle)
            && (path == nil || path == request.path)
    }
}
