import Foundation
import HeraldCore
import Hummingbird

/// The test-bed API's listings of what the device keeps beside its notifications (`/api/v1/activities`,
/// `/api/v1/widgets`): each read whole from the device, filtered, and waited on through the part's own changes.
extension TestBedAPI {
    /// Answers `GET /api/v1/<name>` with the device's entries that `matches` keeps, in the device's order: `limit`,
    /// `wait` and `min` as every listing takes them.
    ///
    /// - Parameters:
    ///   - name: The listing's member name and route (`activities`, `widgets`).
    ///   - request: The request.
    ///   - filters: The filter parameters the listing takes besides `limit`, `wait` and `min`.
    ///   - changes: What signals a change of the entries.
    ///   - read: Reads every entry from the device.
    ///   - json: An entry as the API writes it.
    ///   - matches: Which entries the query's filters keep; it throws ``APIAnswer`` 400 for a filter it cannot read.
    func deviceListing<Entry: Sendable>(
        _ name: String, _ request: Request, filters: Set<String>, changes: (any TestBedDevice) -> ChangeSignal,
        read: @escaping @Sendable (any TestBedDevice) async throws -> [Entry],
        json: @escaping @Sendable (Entry) -> JSONValue,
        matches: (APIQuery) throws(APIAnswer) -> @Sendable (Entry) -> Bool
    ) async throws(APIAnswer) -> APIListing {
        let query = try APIQuery(request, allowed: filters.union(["limit", "wait", "min"]))
        let device = try testBedDevice()
        if query["bundle"]?.isEmpty == true {
            throw .error(.badRequest, "bundle must be an app's bundle ID; leave it out for every app", parameter: "bundle")
        }
        let keeps = try matches(query)
        let limit = try query.integer("limit", in: 1...Self.largestListing, default: 100)
        let wait = try query.seconds("wait", in: 0...Self.longestWait)
        let least = try query.integer("min", in: 1...Self.largestListing, default: 1)
        guard least <= limit else {
            throw .error(.badRequest, "min (\(least)) cannot be more than limit (\(limit))", parameter: "min")
        }
        return try await reading(changes(device), wait: wait, least: least) {
            () async throws(APIAnswer) -> [Entry] in
            Array(try await self.storeCall { try await read(device) }.filter(keeps).prefix(limit))
        } answer: { found, complete in
            APIAnswer(status: .ok, body: .members([name: .array(found.map(json)), "complete": .bool(complete)]))
        }
    }

    /// The answer to a filter that takes `true` or `false`.
    ///
    /// - Throws: ``APIAnswer`` 400 naming `name` for anything else.
    static func flag(_ name: String, in query: APIQuery) throws(APIAnswer) -> Bool? {
        guard let text = query[name] else { return nil }
        guard let value = Bool(text) else {
            throw .error(.badRequest, "\(name) must be true or false; got \(text)", parameter: name)
        }
        return value
    }
}
