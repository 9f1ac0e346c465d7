import HTTPTypes

/// Which of the device's notifications a test-bed API listing, wait or removal is about (`/api/v1/notifications`):
/// every field that is set must match.
struct NotificationFilter {
    /// The query parameters that name a filter.
    static let parameters: Set<String> = [
        "bundle", "state", "identifier", "threadIdentifier", "categoryIdentifier", "uniqueID", "presented",
    ]

    /// The app; `nil`: every app.
    var bundle: String?
    /// Delivered (the default) or pending.
    var list = TestBedNotification.List.delivered
    /// `request.identifier`.
    var identifier: String?
    /// `content.threadIdentifier`.
    var threadIdentifier: String?
    /// `content.categoryIdentifier`.
    var categoryIdentifier: String?
    /// The push's `apns-unique-id` (any case).
    var uniqueID: String?
    /// Whether the person has been shown it (``TestBedNotification/presented``).
    var presented: Bool?

    /// The filter `query` names.
    ///
    /// - Throws: ``APIAnswer`` 400 naming `state` when it is neither `delivered` nor `pending`, `presented` when it is
    ///   neither `true` nor `false`, or `bundle` when empty.
    init(_ query: APIQuery) throws(APIAnswer) {
        bundle = query["bundle"]
        if bundle?.isEmpty == true {
            throw .error(.badRequest, "bundle must be an app's bundle ID; leave it out for every app", parameter: "bundle")
        }
        if let state = query["state"] {
            guard let known = TestBedNotification.List(rawValue: state) else {
                throw .error(.badRequest, "state must be delivered or pending; got \(state)", parameter: "state")
            }
            list = known
        }
        identifier = query["identifier"]
        threadIdentifier = query["threadIdentifier"]
        categoryIdentifier = query["categoryIdentifier"]
        uniqueID = query["uniqueID"]?.lowercased()
        presented = try TestBedAPI.flag("presented", in: query)
    }

    /// Whether `notification` is one the filter names (its app and list are the caller's to choose).
    func matches(_ notification: TestBedNotification) -> Bool {
        (identifier.map { $0 == notification.identifier } ?? true)
            && (threadIdentifier.map { $0 == notification.threadIdentifier } ?? true)
            && (categoryIdentifier.map { $0 == notification.categoryIdentifier } ?? true)
            && (uniqueID.map { $0 == notification.uniqueID?.lowercased() } ?? true)
            && (presented.map { $0 == notification.presented } ?? true)
    }
}
