import Foundation
import HeraldCore
import HeraldGatewayStore
import Hummingbird
import Logging
import Synchronization

/// The test-bed API's routes: status, deliveries, notifications, and the authorization every one of them asks for.
extension TestBedAPI {
    /// The longest wait a listing takes (`wait=`), in seconds.
    static let longestWait = 60.0
    /// The most deliveries one listing answers (`limit=`).
    static let largestListing = 1000
    /// The filters a listing or removal of deliveries takes.
    static let deliveryFilters: Set<String> = [
        "token", "topic", "door", "pushType", "collapseID", "state", "since",
    ]

    func routes(_ router: Router<ConsoleRequestContext>) {
        let api = router.group("api/v1")
        api.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: TestBedAPIDocument.json)))
        }
        faultRoutes(api)
        api.get("status") { [self] request, _ in
            await answeringListing(request) { () async throws(APIAnswer) -> APIListing in
                try await authorize(request)
                let query = try APIQuery(request, allowed: ["wait"])
                return try status(waiting: try query.seconds("wait", in: 0...Self.longestWait) ?? 0)
            }
        }
        api.get("deliveries") { [self] request, _ in
            await answeringListing(request) { () async throws(APIAnswer) -> APIListing in
                try await authorize(request)
                return try await listDeliveries(request)
            }
        }
        api.delete("deliveries") { [self] request, _ in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                let query = try APIQuery(request, allowed: Self.deliveryFilters)
                let filter = try await deliveryFilter(query)
                let log = try deliveryLog()
                let deleted = try await storeCall { try await log.deleteDeliveries(filter) }
                logger.info("Test-bed API: deliveries removed", metadata: ["deleted": "\(deleted)"])
                return APIAnswer(status: .ok, body: .members(["deleted": .integer(Int64(deleted))]))
            }
        }
        api.get("deliveries/:uniqueID") { [self] request, context in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                _ = try APIQuery(request, allowed: [])
                let uniqueID = (context.parameters.get("uniqueID") ?? "").lowercased()
                let log = try deliveryLog()
                guard let delivery = try await storeCall({ try await log.delivery(uniqueID: uniqueID) }) else {
                    throw .error(.notFound, "no delivery has apns-unique-id \(uniqueID)", parameter: "uniqueID")
                }
                return APIAnswer(status: .ok, body: delivery.testBedJSON)
            }
        }
        api.get("notifications") { [self] request, _ in
            await answeringListing(request) { () async throws(APIAnswer) -> APIListing in
                try await authorize(request)
                return try await listNotifications(request)
            }
        }
        api.delete("notifications") { [self] request, _ in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                let query = try APIQuery(request, allowed: NotificationFilter.parameters)
                let device = try testBedDevice()
                let filter = try NotificationFilter(query)
                try await checkApp(filter.bundle, on: device)
                var deleted = 0
                for (app, matching) in try await notifications(filter, on: device) {
                    let identifiers = matching.map(\.identifier)
                    deleted += try await storeCall {
                        try await device.removeNotifications(identifiers, of: app, from: filter.list)
                    }
                }
                logger.info(
                    "Test-bed API: notifications removed", metadata: ["deleted": "\(deleted)", "list": "\(filter.list)"])
                return APIAnswer(status: .ok, body: .members(["deleted": .integer(Int64(deleted))]))
            }
        }
        eventStreamRoute(api)
        deviceListingRoutes(api)
        // Anything else under /api/v1: JSON, not the console's HTML.
        api.on("**", method: .get) { _, _ in
            APIAnswer.error(.notFound, "no such route; GET /api/v1/openapi.json lists them").response
        }
    }

    /// Runs a route's work and turns what it throws into its JSON answer.
    func answering(_ work: () async throws(APIAnswer) -> APIAnswer) async -> Response {
        do {
            return try await work().response
        } catch {
            return error.response
        }
    }

    /// Admits a request with a valid operator token as its bearer token.
    ///
    /// - Throws: ``APIAnswer`` 401 saying what is missing or wrong.
    func authorize(_ request: Request) async throws(APIAnswer) {
        guard let header = request.headers[.authorization] else {
            throw .error(
                .unauthorized, "no Authorization header: send Authorization: Bearer <operator token> (herald console token)",
                parameter: "Authorization")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw .error(.unauthorized, "Authorization must be Bearer <operator token>", parameter: "Authorization")
        }
        let hash = OperatorToken.hash(String(parts[1]))
        switch callers {
        case .consoleStore(let operators):
            let record = try await storeCall { try await operators.operatorToken(hash: hash) }
            guard let record, OperatorToken.admits(record, at: clock.now) else {
                throw .error(
                    .unauthorized,
                    "the operator token is unknown, revoked or older than 30 days: make one with herald console token",
                    parameter: "Authorization")
            }
        case .tokenHashes(let hashes):
            guard hashes.contains(hash) else {
                throw .error(
                    .unauthorized,
                    "the operator token is not this device's: give the one herald device printed, or start it with HERALD_OPERATOR_TOKEN",
                    parameter: "Authorization")
            }
        }
    }

    /// A store call whose failure is a 503 JSON answer.
    func storeCall<T: Sendable>(_ call: () async throws -> T) async throws(APIAnswer) -> T {
        do {
            return try await call()
        } catch is CancellationError {
            // The client went away while its wait read the store.
            throw .error(.serviceUnavailable, "the client closed its connection")
        } catch {
            logger.error("Test-bed API: the gateway's store failed", metadata: ["error": "\(error)"])
            throw .error(.serviceUnavailable, "the gateway's store is unavailable; try again")
        }
    }

    /// The filter a request's query names.
    func deliveryFilter(_ query: APIQuery) async throws(APIAnswer) -> DeliveryFilter {
        var filter = DeliveryFilter()
        filter.token = query["token"]
        filter.topic = query["topic"]
        filter.pushType = query["pushType"]
        filter.collapseID = query["collapseID"]
        filter.state = query["state"]
        if let door = query["door"] {
            guard let known = DeliverySentAs.Door(rawValue: door) else {
                let doors = DeliverySentAs.Door.allCases.map(\.rawValue).joined(separator: ", ")
                throw .error(.badRequest, "door must be one of \(doors); got \(door)", parameter: "door")
            }
            filter.door = known
        }
        if let since = query["since"] {
            let log = try deliveryLog()
            guard try await storeCall({ try await filter.narrow(since: since, in: log) }) else {
                throw .error(
                    .badRequest,
                    "since must be an RFC 3339 time or the apns-unique-id of a delivery in the log; got \(since)",
                    parameter: "since")
            }
        }
        return filter
    }

    /// `GET /api/v1/deliveries`: the deliveries the filters match, oldest first; with `wait`, once `min` match or at
    /// the timeout.
    private func listDeliveries(_ request: Request) async throws(APIAnswer) -> APIListing {
        let query = try APIQuery(request, allowed: Self.deliveryFilters.union(["limit", "wait", "min"]))
        let filter = try await deliveryFilter(query)
        let limit = try query.integer("limit", in: 1...Self.largestListing, default: 100)
        let wait = try query.seconds("wait", in: 0...Self.longestWait)
        let least = try query.integer("min", in: 1...Self.largestListing, default: 1)
        guard least <= limit else {
            throw .error(.badRequest, "min (\(least)) cannot be more than limit (\(limit))", parameter: "min")
        }
        let log = try deliveryLog()
        return try await reading(log.deliveryLogChanges, wait: wait, least: least) {
            () async throws(APIAnswer) -> [LoggedDelivery] in
            try await self.storeCall { try await log.deliveries(filter, limit: limit) }
        } answer: { found, complete in
            APIAnswer(
                status: .ok, body: .members(["deliveries": .array(found.map(\.testBedJSON)), "complete": .bool(complete)]))
        }
    }

    /// Reads what `read` finds until at least `least` entries match or, with a `wait`, until the wait is over —
    /// woken by `changes`, never polling — and answers with what `answer` makes of the entries and whether `least`
    /// matched (always `true` without a wait). A wait that has to wait answers later (``APIListing/later(_:)``); a read
    /// that fails then ends it with what was found before, `complete` false.
    ///
    /// - Throws: ``APIAnswer`` 503 when ``WaitLimiter/limit`` waits are open already, or what the first `read` throws.
    func reading<Entry: Sendable>(
        _ changes: ChangeSignal, wait: Double?, least: Int,
        _ read: @escaping @Sendable () async throws(APIAnswer) -> [Entry],
        answer: @escaping @Sendable (_ found: [Entry], _ complete: Bool) -> APIAnswer
    ) async throws(APIAnswer) -> APIListing {
        let seenFirst = changes.generation
        let first = try await read()
        guard let wait, wait > 0, first.count < least else {
            return .now(answer(first, wait == nil || first.count >= least))
        }
        let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
        // One place for the whole wait, taken once: a wait that was admitted is not refused halfway.
        guard let place = WaitLimiter.Place(in: waits) else {
            throw .error(.serviceUnavailable, "too many open waits (\(waits.limit)); try again", parameter: "wait")
        }
        // Read again at each change (no task waits meanwhile: WaitingAnswer); a read that fails ends the wait with
        // what was found before.
        let lastFound = LastFound(first)
        return .later(
            WaitingAnswer(
                changes: changes, seen: seenFirst, deadline: deadline, gate: deepWork, place: place,
                poll: {
                    switch await Self.result(of: read) {
                    case .success(let entries):
                        lastFound.set(entries)
                        return entries.count >= least ? answer(entries, true) : nil
                    case .failure:
                        return answer(lastFound.get(), false)
                    }
                },
                expire: { answer(lastFound.get(), false) }))
    }

    /// What `read` returns, or what it throws.
    static func result<Entry>(
        of read: @Sendable () async throws(APIAnswer) -> [Entry]
    ) async -> Result<[Entry], APIAnswer> {
        do throws(APIAnswer) {
            return .success(try await read())
        } catch {
            return .failure(error)
        }
    }

    /// Runs a listing route's work and answers with its listing, now or once its wait is over; what it throws is its
    /// JSON answer.
    /// A request with `wait` has its connection closed after the answer, however it answers (a client opens another
    /// for its next request): the same for a wait that answers at once as for one that waited.
    func answeringListing(_ request: Request, _ work: () async throws(APIAnswer) -> APIListing) async -> Response {
        let waiting = request.uri.queryParameters["wait"] != nil
        do {
            switch try await work() {
            case .now(var answer):
                answer.closesConnection = waiting
                return answer.response
            case let later:
                return later.response
            }
        } catch var error {
            error.closesConnection = waiting
            return error.response
        }
    }

    /// `GET /api/v1/status`: whether the sandbox is ready, and what it is made of (`herald up`'s banner); with `wait`,
    /// once it is ready or at the timeout.
    ///
    /// - Throws: ``APIAnswer`` 503 when ``WaitLimiter/limit`` waits are open already.
    private func status(waiting wait: Double) throws(APIAnswer) -> APIListing {
        @Sendable func answer(_ facts: JSONValue?) -> APIAnswer {
            guard case .object(let facts)? = facts else {
                return APIAnswer(status: .ok, body: .members(["ready": .bool(false)]))
            }
            return APIAnswer(status: .ok, body: .object([JSONValue.Member("ready", .bool(true))] + facts))
        }
        let seen = sandboxStatus.changes.generation
        let facts = sandboxStatus.current
        guard facts == nil, wait > 0 else { return .now(answer(facts)) }
        guard let place = WaitLimiter.Place(in: waits) else {
            throw .error(.serviceUnavailable, "too many open waits (\(waits.limit)); try again", parameter: "wait")
        }
        return .later(
            WaitingAnswer(
                changes: sandboxStatus.changes, seen: seen, deadline: .now + .milliseconds(Int64(wait * 1000)),
                gate: deepWork, place: place,
                poll: { [sandboxStatus] in sandboxStatus.current.map(answer) },
                expire: { answer(nil) }))
    }

    /// The device the notifications API reports on.
    ///
    /// - Throws: ``APIAnswer`` 404 when the console runs without one (`herald gateway`), saying which routes need one.
    func testBedDevice() throws(APIAnswer) -> any TestBedDevice {
        guard let device else {
            throw .error(
                .notFound,
                "no device runs beside this console: the notifications, activities and widgets API is served by herald up, whose device it reports on"
            )
        }
        return device
    }

    /// `GET /api/v1/notifications`: the notifications on the device the filters match, app by app in bundle ID order,
    /// each app's in Apple's order; with `wait`, once `min` match or at the timeout.
    private func listNotifications(_ request: Request) async throws(APIAnswer) -> APIListing {
        let query = try APIQuery(request, allowed: NotificationFilter.parameters.union(["limit", "wait", "min"]))
        let device = try testBedDevice()
        let filter = try NotificationFilter(query)
        try await checkApp(filter.bundle, on: device)
        let limit = try query.integer("limit", in: 1...Self.largestListing, default: 100)
        let wait = try query.seconds("wait", in: 0...Self.longestWait)
        let least = try query.integer("min", in: 1...Self.largestListing, default: 1)
        guard least <= limit else {
            throw .error(.badRequest, "min (\(least)) cannot be more than limit (\(limit))", parameter: "min")
        }
        return try await reading(device.changes, wait: wait, least: least) {
            () async throws(APIAnswer) -> [TestBedNotification] in
            Array(try await self.notifications(filter, on: device).flatMap(\.matching).prefix(limit))
        } answer: { found, complete in
            APIAnswer(
                status: .ok, body: .members(["notifications": .array(found.map(\.json)), "complete": .bool(complete)]))
        }
    }

    /// Checks that the app a filter names is on the device.
    ///
    /// - Throws: ``APIAnswer`` 404 naming `bundle` when it is not.
    private func checkApp(_ bundle: String?, on device: any TestBedDevice) async throws(APIAnswer) {
        guard let bundle else { return }
        let apps = try await storeCall { try await device.apps() }
        guard apps.contains(bundle) else {
            throw .error(.notFound, "no app with bundle ID \(bundle) has used notifications on the device", parameter: "bundle")
        }
    }

    /// The notifications `filter` matches, app by app (bundle ID order).
    private func notifications(
        _ filter: NotificationFilter, on device: any TestBedDevice
    ) async throws(APIAnswer) -> [(app: String, matching: [TestBedNotification])] {
        let apps: [String]
        if let bundle = filter.bundle {
            apps = [bundle]
        } else {
            apps = try await storeCall { try await device.apps() }.sorted()
        }
        var found: [(app: String, matching: [TestBedNotification])] = []
        for app in apps {
            let all = try await storeCall { try await device.notifications(of: app, in: filter.list) }
            let matching = all.filter(filter.matches)
            if !matching.isEmpty { found.append((app, matching)) }
        }
        return found
    }
}

/// The entries a wait's last read found, for its answer at the deadline or after a failed read.
private final class LastFound<Entry: Sendable>: Sendable {
    private let entries: Mutex<[Entry]>

    init(_ entries: [Entry]) {
        self.entries = Mutex(entries)
    }

    func set(_ entries: [Entry]) {
        self.entries.withLock { $0 = entries }
    }

    func get() -> [Entry] {
        entries.withLock { $0 }
    }
}
