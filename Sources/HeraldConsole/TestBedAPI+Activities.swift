import Foundation
import HeraldCore
import Hummingbird

/// The test-bed API's Live Activities, widgets and app pushes (`/api/v1/activities`, `/api/v1/widgets`,
/// `/api/v1/app-pushes`): what ActivityKit's `Activity.activities` gives each app on `herald up`'s device, what WidgetKit
/// keeps of its widgets, and the pushes handed to apps' handlers rather than shown, with Apple's names, waited on
/// through their changes.
extension TestBedAPI {
    /// ActivityKit's `ActivityState` names.
    static let activityStates: Set<String> = ["active", "ended", "dismissed", "stale", "pending"]

    func deviceListingRoutes(_ api: RouterGroup<ConsoleRequestContext>) {
        api.get("activities") { [self] request, _ in
            await answeringListing(request) { () async throws(APIAnswer) -> APIListing in
                try await authorize(request)
                return try await listActivities(request)
            }
        }
        api.get("widgets") { [self] request, _ in
            await answeringListing(request) { () async throws(APIAnswer) -> APIListing in
                try await authorize(request)
                return try await listWidgets(request)
            }
        }
        api.get("app-pushes") { [self] request, _ in
            await answeringListing(request) { () async throws(APIAnswer) -> APIListing in
                try await authorize(request)
                return try await listAppPushes(request)
            }
        }
    }

    /// `GET /api/v1/app-pushes`: the background pushes, VoIP pushes and web push messages the filters match, oldest
    /// first.
    private func listAppPushes(_ request: Request) async throws(APIAnswer) -> APIListing {
        try await deviceListing(
            "appPushes", request, filters: ["bundle", "kind", "state", "uniqueID"],
            changes: \.appPushChanges, read: { try await $0.appPushes() }, json: \.json
        ) { query throws(APIAnswer) in
            let (bundle, uniqueID) = (query["bundle"], query["uniqueID"])
            var kind: TestBedAppPush.Kind?
            if let text = query["kind"] {
                kind = TestBedAppPush.Kind(rawValue: text)
                guard kind != nil else {
                    throw .error(
                        .badRequest,
                        "kind must be one of \(TestBedAppPush.Kind.allCases.map(\.rawValue).joined(separator: ", ")); got \(text)",
                        parameter: "kind")
                }
            }
            let state = query["state"]
            if let state, !TestBedAppPush.states.contains(state) {
                throw .error(
                    .badRequest,
                    "state must be one of \(TestBedAppPush.states.sorted().joined(separator: ", ")); got \(state)",
                    parameter: "state")
            }
            return { [kind] push in
                (bundle.map { $0 == push.bundleID } ?? true) && (kind.map { $0 == push.kind } ?? true)
                    && (state.map { $0 == push.state } ?? true) && (uniqueID.map { $0 == push.uniqueID } ?? true)
            }
        }
    }

    /// `GET /api/v1/activities`: the Live Activities the filters match, oldest first.
    private func listActivities(_ request: Request) async throws(APIAnswer) -> APIListing {
        try await deviceListing(
            "activities", request, filters: ["bundle", "id", "attributesType", "activityState"],
            changes: \.liveActivityChanges, read: { try await $0.liveActivities() }, json: \.json
        ) { query throws(APIAnswer) in
            let (bundle, id, type, state) = (query["bundle"], query["id"], query["attributesType"], query["activityState"])
            if let state, !Self.activityStates.contains(state) {
                throw .error(
                    .badRequest,
                    "activityState must be one of \(Self.activityStates.sorted().joined(separator: ", ")); got \(state)",
                    parameter: "activityState")
            }
            return { activity in
                (bundle.map { $0 == activity.bundleID } ?? true) && (id.map { $0 == activity.id } ?? true)
                    && (type.map { $0 == activity.attributesType } ?? true)
                    && (state.map { $0 == activity.activityState } ?? true)
            }
        }
    }

    /// `GET /api/v1/widgets`: the widgets and controls the filters match, by app and kind.
    private func listWidgets(_ request: Request) async throws(APIAnswer) -> APIListing {
        try await deviceListing(
            "widgets", request, filters: ["bundle", "kind", "isControl", "reloadPending", "reloadedSince"],
            changes: \.widgetChanges, read: { try await $0.widgets() }, json: \.json
        ) { query throws(APIAnswer) in
            let (bundle, kind) = (query["bundle"], query["kind"])
            let isControl = try Self.flag("isControl", in: query)
            let pending = try Self.flag("reloadPending", in: query)
            var since: Date?
            if let text = query["reloadedSince"] {
                since = Date(rfc3339: text)
                guard since != nil else {
                    throw .error(
                        .badRequest, "reloadedSince must be an RFC 3339 time; got \(text)", parameter: "reloadedSince")
                }
            }
            return { [since] widget in
                (bundle.map { $0 == widget.bundleID } ?? true) && (kind.map { $0 == widget.kind } ?? true)
                    && (isControl.map { $0 == widget.isControl } ?? true)
                    && (pending.map { $0 == widget.reloadPending } ?? true)
                    && (since.map { since in widget.reloadedAt.map { $0 >= since } ?? false } ?? true)
            }
        }
    }
}
