import Foundation
import HTTPTypes
import HeraldCore
import HeraldGatewayStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The test-bed API's event stream (`GET /api/v1/events`): every delivery-log event as it is written, as Server-Sent
/// Events, resumable with `Last-Event-ID`; and, beside a device, each change of what the device shows
/// (``DeviceEventWatch``).
extension TestBedAPI {
    /// The filters a stream takes: those of a delivery listing that name what a push was sent as.
    static let streamFilters: Set<String> = ["token", "topic", "door", "pushType", "collapseID"]
    /// How many events one read of the log takes.
    static let streamReadLimit = 500
    /// How long a stream stays silent before it sends a comment (so a proxy, or a client's read timeout, sees it live).
    static let streamKeepAlive: Duration = .seconds(15)
    /// `Last-Event-ID`: where a stream resumes.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!

    func eventStreamRoute(_ api: RouterGroup<ConsoleRequestContext>) {
        api.get("events") { [self] request, _ -> Response in
            let start: Int64
            let filter: DeliveryFilter
            let admitted: WaitLimiter.Admission
            let watch: DeviceEventWatch?
            do {
                try await authorize(request)
                let query = try APIQuery(request, allowed: Self.streamFilters)
                filter = try await deliveryFilter(query)
                start = try await streamStart(request)
                // What the device shows now, before the stream answers: only what changes after it is sent.
                var started = deviceWatch(for: filter)
                try await started?.start()
                watch = started
                guard let admission = streams.admit() else {
                    throw APIAnswer.error(.serviceUnavailable, "too many open streams (\(streams.limit)); try again")
                }
                admitted = admission
            } catch let answer as APIAnswer {
                return answer.response
            } catch {
                return APIAnswer.error(.serviceUnavailable, "the gateway's store is unavailable; try again").response
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-store", .connection: "close"],
                body: ResponseBody { [self] writer in
                    defer { streams.release(admitted) }
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    // The stream ends when its client goes away (LongRequestHandoff cancels it), not at its next write.
                    try? await self.loggedEvents(after: start, matching: filter, device: watch) { text in
                        try await writer.write(ByteBuffer(string: text))
                    }
                    try? await writer.finish(nil)
                })
        }
    }

    /// Where a stream starts: after the `Last-Event-ID` it resumes from, else after the newest event now.
    ///
    /// - Throws: ``APIAnswer`` 400 naming `Last-Event-ID` when it is not a sequence the log gave.
    private func streamStart(_ request: Request) async throws -> Int64 {
        // A device's own stream has no delivery log to resume: its events carry no id.
        guard let store else { return 0 }
        let latest = try await store.latestEventSequence()
        guard let text = request.headers[Self.lastEventID] else { return latest }
        guard let sequence = Int64(text.trimmingCharacters(in: .whitespaces)), sequence >= 0, sequence <= latest else {
            throw APIAnswer.error(
                .badRequest, "Last-Event-ID must be the id of an event this stream sent (0 to \(latest)); got \(text)",
                parameter: "Last-Event-ID")
        }
        return sequence
    }

    /// What a stream with `filter` watches of the device beside the console: every app's changes, or its `topic`'s;
    /// `nil` without a device, or with a filter only a push has (`token`, `door`, `pushType`, `collapseID`).
    private func deviceWatch(for filter: DeliveryFilter) -> DeviceEventWatch? {
        guard let device, filter.token == nil, filter.door == nil, filter.pushType == nil, filter.collapseID == nil
        else { return nil }
        return DeviceEventWatch(device: device, bundleID: filter.topic)
    }

    /// Sends the log's events after `start` that `filter` matches, then each one as it is written, and each change of
    /// the device `device` watches, until the task is cancelled, the console shuts down, or a write or read fails.
    private func loggedEvents(
        after start: Int64, matching filter: DeliveryFilter, device: DeviceEventWatch?,
        send: (String) async throws -> Void
    ) async throws {
        guard let store else {
            try await deviceEvents(device, send: send)
            return
        }
        let changes = store.deliveryLogChanges
        var cursor = EventCursor(after: start)
        var device = device
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let seen = changes.generation
            try await sendChanges(of: &device, send: send)
            // The read in a child task, a few at once: its frames (the store's) go with it, and the streaming task
            // stays shallow.
            let after = cursor.settled
            let read = try await deepWork.run { try await store.loggedEvents(after: after, limit: Self.streamReadLimit) }
            let before = cursor.settled
            let fresh = cursor.take(read, sequence: \.sequence, now: .now)
            let text = fresh.filter { Self.matches($0, filter) }.map(Self.serverSentEvent).joined()
            if !text.isEmpty { try await send(text) }
            // A full read that moved on: more is waiting.
            if read.count == Self.streamReadLimit && cursor.settled > before { continue }
            await ChangeSignal.wait(
                any: [(changes, seen)] + (device?.seen ?? []),
                timeout: cursor.waitsForGap ? EventCursor.grace : Self.streamKeepAlive)
            if changes.generation == seen && device?.hasChanged != true && !cursor.waitsForGap {
                try await send(": keep-alive\n\n")
            }
        }
    }

    /// Sends each change of the device `device` watches, on a device's own stream (no delivery log), until the task is
    /// cancelled, the server shuts down, or a write or read fails.
    private func deviceEvents(_ device: DeviceEventWatch?, send: (String) async throws -> Void) async throws {
        var device = device
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try await sendChanges(of: &device, send: send)
            if let seen = device?.seen {
                await ChangeSignal.wait(any: seen, timeout: Self.streamKeepAlive)
            } else {
                try await Task.sleep(for: Self.streamKeepAlive)  // a filter only a push has: nothing to send but keep-alives
            }
            if device?.hasChanged != true { try await send(": keep-alive\n\n") }
        }
    }

    /// Sends what changed on the device since the watch last looked, if anything did.
    private func sendChanges(of device: inout DeviceEventWatch?, send: (String) async throws -> Void) async throws {
        guard device?.hasChanged == true else { return }
        let text = try await device?.changes().map(Self.serverSentEvent).joined() ?? ""
        if !text.isEmpty { try await send(text) }
    }

    /// Whether an event's notification was sent as `filter` names.
    private static func matches(_ logged: LoggedEvent, _ filter: DeliveryFilter) -> Bool {
        guard filter != DeliveryFilter() else { return true }
        guard let subject = logged.subject else { return false }
        let sent = subject.sentAs
        return (filter.token.map { $0 == subject.recipient } ?? true)
            && (filter.topic.map { $0 == subject.topic } ?? true)
            && (filter.door.map { $0 == (sent?.door ?? .apns) } ?? true)
            && (filter.pushType.map { $0 == sent?.pushType } ?? true)
            && (filter.collapseID.map { $0 == sent?.collapseID } ?? true)
    }

    /// A device event as the stream sends it: `event:` its kind, `data:` its JSON on one line, no `id:` (it is not kept:
    /// a client resuming from the last `id:` it got resumes the log).
    private static func serverSentEvent(_ event: DeviceEventWatch.Event) -> String {
        "event: \(event.kind)\ndata: \(event.data.jsonText)\n\n"
    }

    /// An event as the stream sends it: `id:` its sequence, `event:` its kind, `data:` its JSON on one line.
    private static func serverSentEvent(_ logged: LoggedEvent) -> String {
        let event = logged.event
        let subject = logged.subject
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        let data = JSONValue.object([
            .init("sequence", .integer(logged.sequence)), .init("uniqueID", .string(event.uniqueID)),
            .init("kind", .string(event.kind.rawValue)), .init("state", .string(event.stateName)),
            .init("detail", .string(event.detail)), .init("at", .time(event.at)),
            .init("apnsID", optional(subject?.apnsID)), .init("token", optional(subject?.recipient)),
            .init("topic", optional(subject?.topic)),
            .init("door", subject.map { .string(($0.sentAs?.door ?? .apns).rawValue) } ?? .null),
            .init("pushType", optional(subject?.sentAs?.pushType)),
        ])
        return "id: \(logged.sequence)\nevent: \(event.kind.rawValue)\ndata: \(data.jsonText)\n\n"
    }
}
