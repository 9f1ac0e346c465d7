import Foundation
import HeraldCore
import Hummingbird

/// The test-bed API's Live Activities (`/api/v1/activities`): what ActivityKit's `Activity.activities` gives each app
/// on `herald up`'s device, with Apple's names, and waits on their changes.
extension ConsoleServer {
    /// The filters a listing of Live Activities takes.
    static let activityFilters: Set<String> = ["bundle", "id", "attributesType", "activityState"]
    /// ActivityKit's `ActivityState` names.
    static let activityStates: Set<String> = ["active", "ended", "dismissed", "stale", "pending"]

    func activityRoutes(_ api: RouterGroup<ConsoleRequestContext>) {
        api.get("activities") { [self] request, _ in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                let waiting = request.uri.queryParameters["wait"] != nil
                return try await untilClientLeaves(request, waiting: waiting) { () async throws(APIAnswer) -> APIAnswer in
                    try await listActivities(request)
                }
            }
        }
    }

    /// `GET /api/v1/activities`: the Live Activities the filters match, oldest first; with `wait`, once `min` match or
    /// at the timeout.
    private func listActivities(_ request: Request) async throws(APIAnswer) -> APIAnswer {
        let query = try APIQuery(request, allowed: Self.activityFilters.union(["limit", "wait", "min"]))
        let device = try testBedDevice()
        if query["bundle"]?.isEmpty == true {
            throw .error(.badRequest, "bundle must be an app's bundle ID; leave it out for every app", parameter: "bundle")
        }
        if let state = query["activityState"], !Self.activityStates.contains(state) {
            throw .error(
                .badRequest, "activityState must be one of \(Self.activityStates.sorted().joined(separator: ", ")); got \(state)",
                parameter: "activityState")
        }
        let limit = try query.integer("limit", in: 1...Self.largestListing, default: 100)
        let wait = try query.seconds("wait", in: 0...Self.longestWait)
        let least = try query.integer("min", in: 1...Self.largestListing, default: 1)
        guard least <= limit else {
            throw .error(.badRequest, "min (\(least)) cannot be more than limit (\(limit))", parameter: "min")
        }
        let (bundle, id, type, state) = (query["bundle"], query["id"], query["attributesType"], query["activityState"])
        let (found, complete) = try await reading(device.liveActivityChanges, wait: wait, least: least) {
            () async throws(APIAnswer) -> [TestBedActivity] in
            let all = try await storeCall { try await device.liveActivities() }
            let matching = all.filter { activity in
                (bundle.map { $0 == activity.bundleID } ?? true) && (id.map { $0 == activity.id } ?? true)
                    && (type.map { $0 == activity.attributesType } ?? true)
                    && (state.map { $0 == activity.activityState } ?? true)
            }
            return Array(matching.prefix(limit))
        }
        return APIAnswer(
            status: .ok, body: .members(["activities": .array(found.map(\.json)), "complete": .bool(complete)]))
    }
}
