import Foundation
import GatewayTestSupport
import HeraldConsole
import HeraldCore
import HeraldGatewayStore
import HeraldTestSupport
import NIOHTTP1
import Testing

/// Issue 64: the test-bed API's waits, from the server's side — what they hold while open and what a client that goes
/// away leaves behind. (The API's answers, as other people's test suites read them, are `TestBedAPITests`.)
extension ConsoleServerTests {
    /// The server's side of the TCP connections to `port` that are not closed yet (any state but LISTEN and
    /// TIME_WAIT), from `/proc/net/tcp`: this console's own, whatever other tests running beside it open.
    static func serverConnections(port: Int) async throws -> Int {
        // Read by cat: a procfs file says it is empty, and a plain read of it stops after its first page.
        let read = try await ChildProcess.run("/bin/cat", ["/proc/net/tcp"], timeout: .seconds(30))
        guard read.status == 0 else { return -1 }
        let table = read.output
        let local = ":" + String(format: "%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(local) && fields[3] != "0A" && fields[3] != "06"
        }.count
    }

    @Test(
        "Issue 64 (bad input): 1,000 open waits are admitted and the next is 503 naming wait; once their clients go away, no wait, connection or admission is left"
    )
    func abandonedWaitsLeaveNothing() async throws {
        _ = OpenFileLimit.raiseToHardLimit()
        try await withConsole { harness, browser, token in
            let changes = harness.store.deliveryLogChanges
            let before = try await Self.serverConnections(port: browser.port)
            #expect(before >= 0, "/proc/net/tcp is readable")
            let request = Array(
                "GET /api/v1/deliveries?token=nobody&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
                    .utf8)
            var connections: [RawConnection] = []
            defer { for connection in connections { Task { await connection.close() } } }
            for _ in 0..<1000 {
                let connection = try await RawConnection.connect(port: browser.port)
                connections.append(connection)
                try await connection.write(request)
            }
            try await eventually("1,000 waits open", timeout: .seconds(60)) { changes.waiting == 1000 }

            let refused = try await browser.api("/api/v1/deliveries?wait=1", token: token)
            #expect(refused.status == 503 && refused.json["parameter"] as? String == "wait", "\(refused)")
            // A wait's status and headers go at once, its JSON once it is over: none has its JSON.
            #expect(
                connections.allSatisfy { !String(decoding: $0.received, as: UTF8.self).contains("complete") },
                "every wait still open")
            #expect(
                try await Self.serverConnections(port: browser.port) >= before + 1000, "the server holds each wait's connection")

            for connection in connections { await connection.close() }
            connections.removeAll()
            // Well before the waits' 60 s: a client that goes away ends its wait.
            try await eventually("every wait ended with its client", timeout: .seconds(30)) { changes.waiting == 0 }
            try await eventually("the server's side of every connection closed", timeout: .seconds(30)) {
                try await Self.serverConnections(port: browser.port) <= before
            }
            let admitted = try await browser.api("/api/v1/deliveries?wait=0.1", token: token)
            #expect(admitted.status == 200 && admitted.json["complete"] as? Bool == false, "\(admitted)")
        }
    }

    @Test(
        "Issue 64: a wait pipelined behind another request on one connection is answered after it, in order; what comes after the wait is not read, and the connection closes after the wait's answer"
    )
    func pipelinedWaitKeepsOrder() async throws {
        try await withConsole { harness, browser, token in
            func request(_ query: String) -> String {
                "GET /api/v1/deliveries?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
            }
            let connection = try await RawConnection.connect(port: browser.port)
            defer { Task { await connection.close() } }
            // Three requests in one write: a listing Hummingbird answers, a wait, and one after the wait.
            try await connection.write(
                Array((request("token=first") + request("token=second&wait=0.3") + request("token=third")).utf8))
            #expect(await connection.waitUntilClosed(timeout: .seconds(30)), "the connection closes after the wait")
            let text = String(decoding: connection.received, as: UTF8.self)
            let answers = text.components(separatedBy: "HTTP/1.1 ").dropFirst()
            #expect(answers.count == 2, "the listing and the wait are answered, the request after the wait is not: \(text)")
            #expect(answers.first?.hasPrefix("200") == true && answers.first?.contains("\"complete\":true") == true, "\(text)")
            #expect(
                answers.last?.hasPrefix("200") == true && answers.last?.contains("\"complete\":false") == true
                    && answers.last?.lowercased().contains("connection: close") == true, "\(text)")
            #expect(harness.store.deliveryLogChanges.waiting == 0)
        }
    }

    @Test(
        "Issue 64 (bad input): 200 event streams are admitted, beside the waits, and the next is 503; once their clients go away, a stream is admitted again"
    )
    func streamLimit() async throws {
        _ = OpenFileLimit.raiseToHardLimit()
        try await withConsole { _, browser, token in
            func open() async throws -> RawConnection {
                let connection = try await RawConnection.connect(port: browser.port)
                try await connection.write(Self.streamRequest("", token: token))
                return connection
            }
            func admitted(_ connection: RawConnection) async -> Bool {
                await connection.waitUntilReceived(timeout: .seconds(30)) {
                    String(decoding: $0, as: UTF8.self).contains("retry: 1000")
                }
            }
            var connections: [RawConnection] = []
            defer { for connection in connections { Task { await connection.close() } } }
            for _ in 0..<200 { connections.append(try await open()) }
            for connection in connections { #expect(await admitted(connection)) }

            let refused = try await browser.api("/api/v1/events", token: token)
            #expect(
                refused.status == 503 && (refused.json["error"] as? String)?.contains("too many open streams (200)") == true,
                "\(refused)")
            let wait = try await browser.api("/api/v1/deliveries?wait=0.1", token: token)
            #expect(wait.status == 200, "a wait has places of its own: \(wait)")

            for connection in connections { await connection.close() }
            connections.removeAll()
            try await eventually("a stream admitted again", timeout: .seconds(30)) {
                let connection = try await open()
                defer { Task { await connection.close() } }
                return await connection.waitUntilReceived(timeout: .seconds(1)) {
                    String(decoding: $0, as: UTF8.self).contains("retry: 1000")
                }
            }
        }
    }

    @Test(
        "Issue 64 (6): status?wait= answers once the sandbox is ready, with what it says; before, ready is false; a wait over 60 s is 400 naming wait"
    )
    func statusWaitsForReadiness() async throws {
        let status = SandboxStatus()
        try await withConsole(sandboxStatus: status) { _, browser, token in
            let early = try await browser.api("/api/v1/status", token: token)
            #expect(early.status == 200 && early.json["ready"] as? Bool == false && early.json.count == 1, "\(early)")
            let expired = try await browser.api("/api/v1/status?wait=0.2", token: token)
            #expect(expired.status == 200 && expired.json["ready"] as? Bool == false, "\(expired)")

            async let waited = browser.api("/api/v1/status?wait=60", token: token)
            try await Task.sleep(for: .milliseconds(100))
            status.ready(.members(["demoApp": .members(["bundleID": "com.example.app"])]))
            let ready = try await waited
            #expect(ready.status == 200 && ready.json["ready"] as? Bool == true, "\(ready)")
            #expect((ready.json["demoApp"] as? [String: Any])?["bundleID"] as? String == "com.example.app", "\(ready)")

            let tooLong = try await browser.api("/api/v1/status?wait=61", token: token)
            #expect(tooLong.status == 400 && tooLong.json["parameter"] as? String == "wait", "\(tooLong)")
        }
    }

    @Test(
        "Issue 64 (3): a query is read as a form's — + is a space, as Python's requests and Node's URLSearchParams write it — and a bad percent-encoding is 400 naming the parameter"
    )
    func queryIsReadAsAForm() async throws {
        try await withConsole { harness, browser, token in
            try await harness.store.appendEvents([
                DeliveryEvent(
                    uniqueID: "u1", at: Date(), kind: .received, detail: DeliveryEvent.receivedDetail,
                    subject: DeliverySubject(apnsID: "id-u1", recipient: "t1", topic: "com.example.app")),
                DeliveryEvent(uniqueID: "u1", at: Date(), kind: .delivered, detail: "Delivered to Device"),
            ])
            for query in ["state=Delivered+to+Device", "state=Delivered%20to%20Device", "st%61te=Delivered%20to+Device"] {
                let answer = try await browser.api("/api/v1/deliveries?\(query)", token: token)
                let found = (answer.json["deliveries"] as? [[String: Any]])?.compactMap { $0["uniqueID"] as? String }
                #expect(answer.status == 200 && found == ["u1"], "\(query): \(answer)")
            }
            let broken = try await browser.api("/api/v1/deliveries?topic=%FF", token: token)
            #expect(broken.status == 400 && broken.json["parameter"] as? String == "topic", "\(broken)")
        }
    }
}

extension ConsoleServerTests {
    static func notification(
        _ identifier: String, app: String = "com.example.app", list: TestBedNotification.List = .delivered,
        thread: String = ""
    ) -> TestBedNotification {
        var notification = TestBedNotification(bundleID: app, list: list, identifier: identifier)
        notification.title = "Title \(identifier)"
        notification.threadIdentifier = thread
        notification.userInfo = .members(["aps": .members(["alert": "x"]), "order": .integer(1)])
        if list == .delivered { notification.date = Date(timeIntervalSince1970: 1_800_000_000.25) }
        return notification
    }

    static func identifiers(_ answer: (status: Int, json: [String: Any])) -> [String]? {
        (answer.json["notifications"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String }
    }

    @Test(
        "Issue 64 (2, 3, 5): notifications by app, list, identifier and thread; a wait answers when the device's list changes, or at its timeout with complete false; DELETE removes only what its filter names; an unknown app is 404 naming bundle, a bad state 400 naming state"
    )
    func notificationsOnTheDevice() async throws {
        let device = ListedDevice(apps: ["com.example.app", "com.example.other"])
        var shown = Self.notification("n1", thread: "t1")
        (shown.presented, shown.presentation) = (true, "banner")
        device.add(shown)
        var held = Self.notification("o1", app: "com.example.other")
        (held.presented, held.presentation) = (false, "heldForFocus")
        device.add(held)
        device.add(Self.notification("p1", list: .pending))
        try await withConsole(device: device) { _, browser, token in
            let all = try await browser.api("/api/v1/notifications", token: token)
            #expect(all.status == 200 && Self.identifiers(all) == ["n1", "o1"], "app by app, delivered: \(all)")
            let first = try #require((all.json["notifications"] as? [[String: Any]])?.first)
            #expect(first["bundleID"] as? String == "com.example.app" && first["state"] as? String == "delivered")
            #expect(first["date"] as? String == "2027-01-15T08:00:00.250Z", "\(first)")
            #expect((first["userInfo"] as? [String: Any])?["order"] as? Int == 1, "\(first)")
            let pending = try await browser.api("/api/v1/notifications?state=pending", token: token)
            #expect(Self.identifiers(pending) == ["p1"], "\(pending)")
            let thread = try await browser.api("/api/v1/notifications?threadIdentifier=t1", token: token)
            #expect(Self.identifiers(thread) == ["n1"], "\(thread)")
            #expect(first["presented"] as? Bool == true && first["presentation"] as? String == "banner", "\(first)")
            let presented = try await browser.api("/api/v1/notifications?presented=true", token: token)
            #expect(Self.identifiers(presented) == ["n1"], "\(presented)")
            let notYet = try await browser.api("/api/v1/notifications?presented=false", token: token)
            #expect(Self.identifiers(notYet) == ["o1"], "\(notYet)")

            // Expect none: the wait runs out.
            let none = try await browser.api("/api/v1/notifications?bundle=com.example.app&identifier=n2&wait=0.3", token: token)
            #expect(none.status == 200 && Self.identifiers(none) == [] && none.json["complete"] as? Bool == false, "\(none)")
            // A wait answers once the device lists it.
            async let waited = browser.api(
                "/api/v1/notifications?bundle=com.example.app&identifier=n2&wait=60", token: token)
            try await Task.sleep(for: .milliseconds(100))
            device.add(Self.notification("n2"))
            let found = try await waited
            #expect(found.status == 200 && Self.identifiers(found) == ["n2"] && found.json["complete"] as? Bool == true)
            let two = try await browser.api("/api/v1/notifications?bundle=com.example.app&min=2&wait=1", token: token)
            #expect(Self.identifiers(two) == ["n2", "n1"] && two.json["complete"] as? Bool == true, "\(two)")

            let removed = try await browser.api(
                "/api/v1/notifications?bundle=com.example.app&identifier=n1", token: token, method: .DELETE)
            #expect(removed.status == 200 && removed.json["deleted"] as? Int == 1, "\(removed)")
            let left = try await browser.api("/api/v1/notifications", token: token)
            #expect(Self.identifiers(left) == ["n2", "o1"], "\(left)")
            let cleared = try await browser.api("/api/v1/notifications", token: token, method: .DELETE)
            #expect(cleared.json["deleted"] as? Int == 2, "every delivered one: \(cleared)")
            let stillPending = try await browser.api("/api/v1/notifications?state=pending", token: token)
            #expect(Self.identifiers(stillPending) == ["p1"], "pending ones stay: \(stillPending)")

            for (query, status, parameter) in [
                ("bundle=com.example.none", 404, "bundle"), ("state=read", 400, "state"), ("bundle=", 400, "bundle"),
                ("wait=61", 400, "wait"), ("min=0", 400, "min"), ("order=1", 400, "order"),
                ("presented=yes", 400, "presented"),
            ] {
                let answer = try await browser.api("/api/v1/notifications?\(query)", token: token)
                #expect(answer.status == status && answer.json["parameter"] as? String == parameter, "\(query): \(answer)")
            }
            let unknownApp = try await browser.api(
                "/api/v1/notifications?bundle=com.example.none", token: token, method: .DELETE)
            #expect(unknownApp.status == 404 && unknownApp.json["parameter"] as? String == "bundle", "\(unknownApp)")
        }
    }

    @Test(
        "Issue 64 (2): a console without a device beside it (herald gateway) answers the notifications API 404 in JSON, saying why"
    )
    func notificationsWithoutADevice() async throws {
        try await withConsole { _, browser, token in
            for route in ["notifications", "activities", "widgets", "app-pushes"] {
                let answer = try await browser.api("/api/v1/\(route)", token: token)
                #expect(answer.status == 404 && (answer.json["error"] as? String)?.contains("herald up") == true, "\(answer)")
            }
        }
    }

    /// A Live Activity as a device lists it.
    static func activity(
        _ id: String, app: String = "com.example.score", state: String = "active", home: Int = 0
    ) -> TestBedActivity {
        TestBedActivity(
            id: id, bundleID: app, attributesType: "ScoreAttributes", activityState: state,
            json: .members([
                "id": .string(id), "bundleID": .string(app), "attributesType": "ScoreAttributes",
                "activityState": .string(state), "content": .members(["state": .members(["home": .integer(Int64(home))])]),
            ]))
    }

    static func activityIDs(_ answer: (status: Int, json: [String: Any])) -> [String]? {
        (answer.json["activities"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
    }

    @Test(
        "Issue 64 (2, 3): Live Activities by app, ID, attributes type and activityState, oldest first; a wait answers when an activity starts or changes, or at its timeout with complete false; bad filters are 400 naming the parameter"
    )
    func liveActivitiesOnTheDevice() async throws {
        let device = ListedDevice(apps: [])
        device.keep(Self.activity("a1"))
        device.keep(Self.activity("b1", app: "com.example.other", state: "ended"))
        try await withConsole(device: device) { _, browser, token in
            let all = try await browser.api("/api/v1/activities", token: token)
            #expect(all.status == 200 && Self.activityIDs(all) == ["a1", "b1"] && all.json["complete"] as? Bool == true)
            let first = try #require((all.json["activities"] as? [[String: Any]])?.first)
            #expect(((first["content"] as? [String: Any])?["state"] as? [String: Any])?["home"] as? Int == 0, "\(first)")
            for (query, expected) in [
                ("bundle=com.example.other", ["b1"]), ("id=a1", ["a1"]), ("activityState=ended", ["b1"]),
                ("attributesType=ScoreAttributes&activityState=active", ["a1"]), ("bundle=com.example.none", []),
                ("limit=1", ["a1"]),
            ] {
                let answer = try await browser.api("/api/v1/activities?\(query)", token: token)
                #expect(answer.status == 200 && Self.activityIDs(answer) == expected, "\(query): \(answer)")
            }

            // Expect none: the wait runs out.
            let none = try await browser.api("/api/v1/activities?id=a2&wait=0.3", token: token)
            #expect(none.status == 200 && Self.activityIDs(none) == [] && none.json["complete"] as? Bool == false, "\(none)")
            // A wait answers once a push-to-start push starts one, and once an update ends one.
            async let started = browser.api("/api/v1/activities?id=a2&wait=60", token: token)
            try await Task.sleep(for: .milliseconds(100))
            device.keep(Self.activity("a2"))
            let found = try await started
            #expect(found.status == 200 && Self.activityIDs(found) == ["a2"] && found.json["complete"] as? Bool == true)
            async let ended = browser.api("/api/v1/activities?id=a2&activityState=ended&wait=60", token: token)
            try await Task.sleep(for: .milliseconds(100))
            device.keep(Self.activity("a2", state: "ended", home: 3))
            let end = try await ended
            #expect(Self.activityIDs(end) == ["a2"] && end.json["complete"] as? Bool == true, "\(end)")

            for (query, parameter) in [
                ("activityState=over", "activityState"), ("bundle=", "bundle"), ("wait=61", "wait"), ("min=0", "min"),
                ("state=active", "state"), ("limit=2&min=3", "min"),
            ] {
                let answer = try await browser.api("/api/v1/activities?\(query)", token: token)
                #expect(answer.status == 400 && answer.json["parameter"] as? String == parameter, "\(query): \(answer)")
            }
            let unauthorized = try await browser.api("/api/v1/activities", token: "wrong")
            #expect(unauthorized.status == 401, "\(unauthorized)")
        }
    }
}

extension ConsoleServerTests {
    /// A request for the event stream, with `Last-Event-ID` if given.
    static func streamRequest(_ query: String, token: String, lastEventID: String? = nil) -> [UInt8] {
        var text = "GET /api/v1/events\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
        if let lastEventID { text += "Last-Event-ID: \(lastEventID)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// The `id:` and `event:` lines of what a stream sent, as "id kind".
    static func streamed(_ bytes: [UInt8]) -> [String] {
        // Split at every line break: "\r\n" (the chunks' framing) is one Character, not a "\n".
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        var found: [String] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("id: ") && index + 1 < lines.count {
            found.append("\(line.dropFirst(4)) \(lines[index + 1].dropFirst("event: ".count))")
        }
        return found
    }

    @Test(
        "Issue 64 (4): the event stream sends each delivery-log event as it is written — id its sequence, event its kind, data its JSON — with the listings' filters; Last-Event-ID resumes after the last event a client got, also after a DELETE; a bad one is 400 naming Last-Event-ID; a client that goes away ends its stream"
    )
    func eventStream() async throws {
        try await withConsole { harness, browser, token in
            func received(_ uniqueID: String, token: String) -> DeliveryEvent {
                DeliveryEvent(
                    uniqueID: uniqueID, at: Date(), kind: .received, detail: DeliveryEvent.receivedDetail,
                    subject: DeliverySubject(
                        apnsID: "id-\(uniqueID)", recipient: token, topic: "com.example.app",
                        sentAs: DeliverySentAs(
                            door: .apns, pushType: "alert", priority: 10, collapseID: nil, expiration: nil,
                            payload: #"{"aps":{}}"#, fcmMessage: nil)))
            }
            try await harness.store.appendEvents([received("before", token: "t1")])
            let changes = harness.store.deliveryLogChanges
            let all = try await RawConnection.connect(port: browser.port)
            let onlyT2 = try await RawConnection.connect(port: browser.port)
            try await all.write(Self.streamRequest("", token: token))
            try await onlyT2.write(Self.streamRequest("?token=t2", token: token))
            try await eventually("both streams are open", timeout: .seconds(30)) { changes.waiting == 2 }

            try await harness.store.appendEvents([received("a", token: "t1")])
            try await harness.store.appendEvents([
                received("b", token: "t2"),
                DeliveryEvent(uniqueID: "b", at: Date(), kind: .delivered, detail: "Delivered to Device"),
            ])
            let sequences = try await harness.store.loggedEvents(after: 0, limit: 10).map(\.sequence)
            #expect(sequences.count == 4)
            let expected = zip(sequences.dropFirst(), ["received", "received", "delivered"]).map { "\($0) \($1)" }
            #expect(
                await all.waitUntilReceived(timeout: .seconds(30)) { Self.streamed($0) == expected },
                "only what came after it opened: \(Self.streamed(all.received)) \(expected)")
            #expect(
                await onlyT2.waitUntilReceived(timeout: .seconds(30)) { Self.streamed($0) == Array(expected.dropFirst()) },
                "t2's events: \(String(decoding: onlyT2.received, as: UTF8.self))")
            let text = String(decoding: all.received, as: UTF8.self)
            #expect(text.lowercased().contains("content-type: text/event-stream"), "\(text)")
            #expect(text.contains(#""uniqueID":"b","kind":"delivered","state":"Delivered to Device""#), "\(text)")
            #expect(text.contains(#""token":"t2","topic":"com.example.app","door":"apns","pushType":"alert""#), "\(text)")

            // The client goes away: its stream ends.
            await all.close()
            await onlyT2.close()
            try await eventually("both streams ended", timeout: .seconds(30)) { changes.waiting == 0 }

            // Resumed after the first event it missed, also after everything was removed.
            #expect(try await harness.store.deleteDeliveries(DeliveryFilter()) == 3)
            try await harness.store.appendEvents([received("c", token: "t1")])
            let resumed = try await RawConnection.connect(port: browser.port)
            try await resumed.write(Self.streamRequest("", token: token, lastEventID: String(sequences[1])))
            let next = try await harness.store.loggedEvents(after: 0, limit: 10).map(\.sequence)
            #expect(next.count == 1 && next[0] > sequences[3], "a sequence is not given again: \(next) \(sequences)")
            #expect(
                await resumed.waitUntilReceived(timeout: .seconds(30)) { Self.streamed($0) == ["\(next[0]) received"] },
                "\(String(decoding: resumed.received, as: UTF8.self))")
            await resumed.close()

            for lastEventID in ["x", "-1", String(next[0] + 1)] {
                let bad = try await RawConnection.connect(port: browser.port)
                try await bad.write(Self.streamRequest("", token: token, lastEventID: lastEventID))
                #expect(
                    await bad.waitUntilReceived(timeout: .seconds(30)) {
                        let answer = String(decoding: $0, as: UTF8.self)
                        return answer.hasPrefix("HTTP/1.1 400") && answer.contains(#""parameter":"Last-Event-ID""#)
                    }, "\(lastEventID): \(String(decoding: bad.received, as: UTF8.self))")
                await bad.close()
            }
            let unknown = try await browser.api("/api/v1/events?since=x", token: token)
            #expect(unknown.status == 400 && unknown.json["parameter"] as? String == "since", "\(unknown)")
            let unauthorized = try await browser.api("/api/v1/events", token: "nope")
            #expect(unauthorized.status == 401, "\(unauthorized)")
        }
    }
}

extension ConsoleServerTests {
    static func widget(_ kind: String, reloadedAt: Date?, pending: Bool = false, control: Bool = false) -> TestBedWidget {
        TestBedWidget(
            bundleID: "com.example.score", kind: kind, isControl: control, reloadedAt: reloadedAt, reloadPending: pending,
            json: .members(["kind": .string(kind), "reloadPending": .bool(pending)]))
    }

    @Test(
        "Issue 64 (2, 3): widgets by app, kind, isControl, reloadPending and reloadedSince; a wait answers when the app sends the timeline a push asked for; bad filters are 400 naming the parameter"
    )
    func widgetsOnTheDevice() async throws {
        let device = ListedDevice(apps: [])
        let placed = Date(timeIntervalSince1970: 1_800_000_000)
        device.keep(Self.widget("score", reloadedAt: placed))
        device.keep(Self.widget("live", reloadedAt: placed, control: true))
        try await withConsole(device: device) { _, browser, token in
            func kinds(_ query: String) async throws -> [String]? {
                let answer = try await browser.api("/api/v1/widgets?\(query)", token: token)
                return (answer.json["widgets"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
            }
            #expect(try await kinds("") == ["score", "live"])
            #expect(try await kinds("isControl=true") == ["live"])
            #expect(try await kinds("kind=score&bundle=com.example.score") == ["score"])
            #expect(try await kinds("reloadPending=true") == [])
            #expect(try await kinds("reloadedSince=2027-01-15T08:00:00Z") == ["score", "live"])
            #expect(try await kinds("reloadedSince=2027-01-15T08:00:00.001Z") == [])

            // A push asks for a reload; the wait answers once the app's timeline comes.
            device.keep(Self.widget("score", reloadedAt: placed, pending: true))
            #expect(try await kinds("reloadPending=true") == ["score"])
            async let reloaded = browser.api(
                "/api/v1/widgets?kind=score&reloadedSince=2027-01-15T08:00:01Z&wait=60", token: token)
            try await Task.sleep(for: .milliseconds(100))
            device.keep(Self.widget("score", reloadedAt: placed.addingTimeInterval(5)))
            let answer = try await reloaded
            #expect(answer.status == 200 && answer.json["complete"] as? Bool == true, "\(answer)")
            let none = try await browser.api("/api/v1/widgets?kind=other&wait=0.3", token: token)
            #expect(none.json["complete"] as? Bool == false, "\(none)")

            for (query, parameter) in [
                ("isControl=yes", "isControl"), ("reloadPending=1", "reloadPending"), ("reloadedSince=today", "reloadedSince"),
                ("bundle=", "bundle"), ("family=systemSmall", "family"), ("wait=-1", "wait"),
            ] {
                let answer = try await browser.api("/api/v1/widgets?\(query)", token: token)
                #expect(answer.status == 400 && answer.json["parameter"] as? String == parameter, "\(query): \(answer)")
            }
        }
    }

    static func appPush(_ kind: TestBedAppPush.Kind, _ uniqueID: String, state: String) -> TestBedAppPush {
        TestBedAppPush(
            kind: kind, bundleID: "com.example.call", uniqueID: uniqueID, state: state,
            receivedAt: Date(timeIntervalSince1970: 1_800_000_000), details: [])
    }

    @Test(
        "Issue 64 (2, 3): app pushes — background, VoIP, web push — by app, kind, state and uniqueID; a wait answers when the app handles one; bad filters are 400 naming the parameter"
    )
    func appPushesOnTheDevice() async throws {
        let device = ListedDevice(apps: [])
        device.keep(Self.appPush(.voip, "call-1", state: "handled"))
        device.keep(Self.appPush(.background, "fetch-1", state: "waiting"))
        try await withConsole(device: device) { _, browser, token in
            func ids(_ query: String) async throws -> [String]? {
                let answer = try await browser.api("/api/v1/app-pushes?\(query)", token: token)
                return (answer.json["appPushes"] as? [[String: Any]])?.compactMap { $0["uniqueID"] as? String }
            }
            #expect(try await ids("") == ["call-1", "fetch-1"])
            #expect(try await ids("kind=voip") == ["call-1"])
            #expect(try await ids("state=waiting&bundle=com.example.call") == ["fetch-1"])
            #expect(try await ids("uniqueID=fetch-1&kind=voip") == [])

            // The app handles its background push; the wait answers then.
            async let handled = browser.api("/api/v1/app-pushes?kind=background&state=handled&wait=60", token: token)
            try await Task.sleep(for: .milliseconds(100))
            device.keep(Self.appPush(.background, "fetch-1", state: "handled"))
            let answer = try await handled
            #expect(answer.status == 200 && answer.json["complete"] as? Bool == true, "\(answer)")
            let none = try await browser.api("/api/v1/app-pushes?kind=webpush&wait=0.3", token: token)
            #expect(none.json["complete"] as? Bool == false, "\(none)")

            for (query, parameter) in [
                ("kind=silent", "kind"), ("state=done", "state"), ("bundle=", "bundle"), ("type=voip", "type"),
                ("min=0", "min"),
            ] {
                let answer = try await browser.api("/api/v1/app-pushes?\(query)", token: token)
                #expect(answer.status == 400 && answer.json["parameter"] as? String == parameter, "\(query): \(answer)")
            }
        }
    }

    /// The `event:` lines of what a stream sent, with the `identifier` or `uniqueID` of each device event's data.
    static func deviceEvents(_ bytes: [UInt8]) -> [String] {
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        var found: [String] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("event: ") && index + 1 < lines.count {
            let kind = String(line.dropFirst("event: ".count))
            guard ["notification", "notificationRemoved", "activity", "widget", "appPush"].contains(kind),
                let data = try? JSONSerialization.jsonObject(with: Data(lines[index + 1].dropFirst("data: ".count).utf8))
                    as? [String: Any]
            else { continue }
            let name = data["identifier"] as? String ?? data["uniqueID"] as? String ?? data["id"] as? String ?? "?"
            found.append("\(kind) \(name)")
        }
        return found
    }

    @Test(
        "Issue 64 (4): beside a device, the event stream sends each change of what the device shows — a notification delivered, changed or removed, an app push, a Live Activity — with no id (a resume resumes the log); topic keeps one app's; a filter only a push has (token) keeps none"
    )
    func deviceEventsInTheStream() async throws {
        let device = ListedDevice(apps: ["com.example.app", "com.example.other"])
        device.add(Self.notification("before"))
        try await withConsole(device: device) { _, browser, token in
            func open(_ query: String) async throws -> RawConnection {
                let connection = try await RawConnection.connect(port: browser.port)
                try await connection.write(Self.streamRequest(query, token: token))
                _ = await connection.waitUntilReceived(timeout: .seconds(10)) {
                    String(decoding: $0, as: UTF8.self).contains("retry: 1000")
                }
                return connection
            }
            let every = try await open("")
            let one = try await open("?topic=com.example.other")
            let pushes = try await open("?token=abc")
            defer { for connection in [every, one, pushes] { Task { await connection.close() } } }

            device.add(Self.notification("shown"))
            var presented = Self.notification("shown")
            presented.presentation = "shownAfterFocus"
            presented.presented = true
            device.add(presented)
            device.add(Self.notification("theirs", app: "com.example.other"))
            device.keep(Self.appPush(.voip, "call-1", state: "handled"))
            device.keep(Self.activity("match-1"))
            _ = try await device.removeNotifications(["before"], of: "com.example.app", from: .delivered)

            let expected = [
                "notification shown", "notification theirs", "appPush call-1", "activity match-1", "notificationRemoved before",
            ]
            let all = await every.waitUntilReceived(timeout: .seconds(10)) { bytes in
                let events = Self.deviceEvents(bytes)
                return expected.allSatisfy(events.contains)
            }
            #expect(all, "\(Self.deviceEvents(every.received))")
            let sent = String(decoding: every.received, as: UTF8.self)
            #expect(!Self.deviceEvents(every.received).contains("notification before"), "only what changed: \(sent)")
            #expect(!sent.contains("id: "), "device events have no id: \(sent)")
            #expect(sent.contains("\"presentation\":\"shownAfterFocus\""), "the change is sent: \(sent)")
            let theirs = await one.waitUntilReceived(timeout: .seconds(10)) {
                Self.deviceEvents($0).contains("notification theirs")
            }
            #expect(theirs)
            #expect(Self.deviceEvents(one.received).allSatisfy { $0.hasSuffix("theirs") }, "\(Self.deviceEvents(one.received))")
            #expect(Self.deviceEvents(pushes.received).isEmpty, "\(Self.deviceEvents(pushes.received))")
        }
    }
}
