import Foundation
import HeraldCore
import HeraldFaults
import HeraldGatewayStore
import HeraldProvider
import Hummingbird
import HummingbirdAuth
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// Herald's console: a web page for the gateway's operators, on a listener of its own (loopback by default), as
/// Apple's Push Notifications Console is for APNs.
///
/// Only a person with an operator token (`herald console token`) gets past the login form; the session cookie is
/// HttpOnly and SameSite=Strict, every form carries the session's CSRF token, failed logins are limited per address,
/// and every page has a Content-Security-Policy without inline script. Pages so far: the delivery log by
/// `apns-unique-id` (`GET /log?id=…`, so a link can be shared).
public final class ConsoleServer: Service, Sendable {
    private let host: String
    private let requestedPort: Int
    /// What the console reads of the gateway, and its channel changes.
    let gateway: any ConsoleGateway
    /// The console's own records: operator tokens, what it sent.
    let store: any ConsoleStore
    let clock: any HeraldClock
    let logger: Logger
    private let throttle = LoginThrottle()
    /// How the send form reaches the gateway; `nil`: no send form.
    let sender: ConsoleSender?
    /// The devices connected to this gateway node; `nil` when the console does not run beside the gateway.
    let onlineDevices: (@Sendable () -> [OnlineDevice])?
    /// How long a live delivery log streams before the browser reconnects (it does so by itself).
    private let liveLogDuration: Duration
    /// The device beside the console (`herald up`'s): the devices page draws what it delivered; `nil` for none.
    let device: (any TestBedDevice)?
    /// The test-bed API the console serves under `/api/v1`.
    let api: TestBedAPI
    private let boundPort = AwaitedValue<Int>()

    /// A console for a gateway.
    ///
    /// - Parameters:
    ///   - host: The interface to listen on (loopback unless you mean otherwise).
    ///   - port: The port; 0 picks a free one (``port()`` says which).
    ///   - gateway: The gateway as the console sees it: its delivery log, its records read, its broadcast channels.
    ///   - store: The console's own store: operator tokens and what it sent.
    ///   - clock: The time source (login throttling, revocations).
    ///   - liveLogDuration: How long one live delivery log (`/log/events`) streams; the browser then opens another.
    ///   - sender: How the send form reaches the gateway's provider API; `nil` leaves the form out.
    ///   - onlineDevices: The devices connected to the gateway now (the devices page); `nil` when unknown.
    ///   - sandboxStatus: What the test-bed API's status says (`herald up`'s banner); by default ready, with nothing
    ///     to add.
    ///   - device: The device the test-bed API's notifications are on (`herald up`'s); `nil` for none.
    ///   - faults: The gateway's fault rules, which the test-bed API edits (`/api/v1/faults`); `nil` when the gateway
    ///     does not run in this process.
    ///   - logger: Where the console logs.
    public init(
        host: String = "127.0.0.1", port: Int, gateway: any ConsoleGateway, store: any ConsoleStore,
        clock: any HeraldClock = SystemClock(),
        liveLogDuration: Duration = .seconds(300), sender: ConsoleSender? = nil,
        onlineDevices: (@Sendable () -> [OnlineDevice])? = nil,
        sandboxStatus: SandboxStatus = SandboxStatus(.object([])), device: (any TestBedDevice)? = nil,
        faults: FaultBook? = nil, logger: Logger
    ) {
        self.device = device
        api = TestBedAPI(
            store: gateway, callers: .consoleStore(store), device: device, faults: faults, clock: clock,
            sandboxStatus: sandboxStatus, logger: logger)
        self.sender = sender
        self.onlineDevices = onlineDevices
        self.liveLogDuration = liveLogDuration
        self.host = host
        self.requestedPort = port
        self.gateway = gateway
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// The port it listens on, once it does; `nil` if it stopped (or could not start) first.
    public func port() async -> Int? {
        await boundPort.wait()
    }

    public func run() async throws {
        defer { boundPort.finish() }
        let sessions = MemoryPersistDriver()
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: ConsoleSecurityHeaders())
        // Sessions for the pages only: the test-bed API takes a bearer token, and a wait holds its request's middleware
        // frames (Swift task memory) for as long as it waits.
        let pages = router.group().add(
            middleware: SessionMiddleware(
                storage: sessions,
                configuration: .init(
                    sessionCookieParameters: .init(name: "herald_console", path: "/", secure: false, sameSite: .strict),
                    defaultSessionExpiration: .seconds(8 * 3600))))
        routes(pages)
        api.routes(router)
        let responder = router.buildResponder()
        var application = Application(
            responder: responder, server: .http1HandingOffWaits(to: responder, gate: api.deepWork, logger: logger),
            configuration: .init(
                address: .hostname(host, port: requestedPort), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(
                    HTTPServerBuilder.consoleConnectionCap, logger: logger)),
            onServerRunning: { [boundPort, requestedPort] channel in
                boundPort.set(channel.localAddress?.port ?? requestedPort)
            },
            logger: logger)
        application.addServices(sessions)
        do {
            try await application.run()
        } catch {
            throw ListenerAddressInUse.from(error, listener: .console, host: host, port: requestedPort) ?? error
        }
    }

    // MARK: Routes

    private func routes(_ router: RouterGroup<ConsoleRequestContext>) {
        router.get("/console.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: ConsolePages.stylesheet)))
        }
        router.get("/") { _, _ in Response.redirect(to: "/log", type: .normal) }
        router.get("/login") { _, _ in
            // No session until a login: the form's CSRF token is a cookie's value too (a double submit), so a visitor
            // who never logs in costs the console nothing.
            let csrf = OperatorToken.make()
            var page = Self.page("login", ["title": "Log in", "csrf": csrf])
            page.setCookie(Self.loginCookie(csrf))
            return page
        }
        router.post("/login") { [self] request, context in
            try await login(request, context: context)
        }
        router.post("/logout") { request, context in
            guard try await Self.form(request, context: context, checkedAgainst: context.sessions.session) != nil else {
                return Self.staleForm
            }
            context.sessions.clearSession()
            return Response.redirect(to: "/login", type: .normal)
        }
        router.get("/send") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            // `?from=<id>`: a send from the history, in the form to change and send again.
            if let id = request.uri.queryParameters.get("from"), let earlier = try await store.consoleSend(id: id) {
                return await sendPage(session: session, form: earlier.form, values: ["fromHistory": true])
            }
            return await sendPage(session: session, form: [:], values: [:])
        }
        router.post("/send") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            guard let form = try await Self.form(request, context: context, checkedAgainst: session) else {
                return Self.staleForm
            }
            return await sendPage(session: session, form: form, values: await send(form))
        }
        router.post("/send/fcm") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            guard let form = try await Self.form(request, context: context, checkedAgainst: session) else {
                return Self.staleForm
            }
            return await sendPage(session: session, form: form, values: await sendFCM(form))
        }
        router.post("/send/webpush") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            guard let form = try await Self.form(request, context: context, checkedAgainst: session) else {
                return Self.staleForm
            }
            return await sendPage(session: session, form: form, values: await sendWebPush(form))
        }
        router.get("/tools") { [self] request, context in
            try await tools(request, context: context) { _, _ in [:] }
        }
        router.post("/tools/jwt") { [self] request, context in
            try await tools(request, context: context) { [gateway, clock] _, form in
                let jwt = form["jwt"] ?? ""
                let result = await TokenChecks.providerToken(jwt, gateway: gateway, now: clock.now)
                return [
                    "jwt": jwt, "hasChecks": true, "header": result.header, "claims": result.claims,
                    "checks": result.checks.map { ["name": $0.name, "passed": $0.passed, "detail": $0.detail] as [String: Any] },
                ]
            }
        }
        router.post("/tools/token") { [self] request, context in
            try await tools(request, context: context) { [gateway] _, form in
                let token = form["token"] ?? ""
                let result = await TokenChecks.deviceToken(token, gateway: gateway)
                return ["token": token, "hasFacts": true, "facts": result.facts.map { ["label": $0.0, "value": $0.1] }]
            }
        }
        router.post("/tools/generate") { [self] request, context in
            try await tools(request, context: context) { [self] _, form in
                await generatedToken(keyID: form["key"] ?? "")
            }
        }
        router.get("/channels") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            let query = request.uri.queryParameters
            return try await channelsPage(
                session: session, app: query.get("app") ?? "", environment: query.get("environment") ?? "development",
                id: query.get("id") ?? "", message: nil)
        }
        router.post("/channels") { [self] request, context in
            try await changeChannels(request, context: context) { app, environment, form in
                let policy: BroadcastChannelRecord.StoragePolicy =
                    form["policy"] == "1" ? .mostRecentMessageStored : .noMessageStored
                let channel = BroadcastChannelRecord(
                    id: BroadcastChannelRecord.makeID(), bundleID: app, environment: environment, storagePolicy: policy,
                    createdAt: clock.now)
                guard try await gateway.createChannel(channel, limit: BroadcastChannelRecord.limitPerApp) else {
                    return
                        "\(app) has \(BroadcastChannelRecord.limitPerApp) channels in \(environment.rawValue) already (CannotCreateChannelConfig)."
                }
                logger.info("Console made a channel", metadata: ["app.bundle_id": "\(app)", "channel.id": "\(channel.id)"])
                return nil
            }
        }
        router.post("/channels/delete") { [self] request, context in
            try await changeChannels(request, context: context) { app, environment, form in
                let id = form["id"] ?? ""
                guard try await gateway.deleteChannel(id: id, bundleID: app, environment: environment) else {
                    return "No channel \(id) for \(app) in \(environment.rawValue) (ChannelNotRegistered)."
                }
                logger.info("Console deleted a channel", metadata: ["app.bundle_id": "\(app)", "channel.id": "\(id)"])
                return nil
            }
        }
        router.get("/console.js") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: ConsolePages.script)))
        }
        router.get("/log/events") { [self] request, context in
            guard await signedIn(context) != nil else { return Response(status: .unauthorized) }
            let id = (request.uri.queryParameters.get("id") ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody { [gateway, liveLogDuration] writer in
                    try await Self.streamEvents(of: id, from: gateway, for: liveLogDuration, to: &writer)
                })
        }
        router.get("/log") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            let id = request.uri.queryParameters.get("id")?.trimmingCharacters(in: .whitespaces) ?? ""
            return try await logPage(session: session, search: id)
        }
        historyRoutes(router)
        deviceRoutes(router)
        metricsRoutes(router)
        faultRoutes(router)
    }

    /// How many notifications a search by apns-id, token or topic lists.
    static let searchLimit = 50

    /// The delivery log: the timeline of an `apns-unique-id` (or of the one notification an `apns-id` names), else the
    /// notifications sent to a device token or channel, or on a topic, newest first.
    private func logPage(session: ConsoleSession, search: String) async throws -> Response {
        var values: [String: Any] = ["title": "Delivery log", "csrf": session.csrf, "signedIn": true, "id": search]
        guard !search.isEmpty else { return Self.page("log", values) }
        let formatter = Self.timeFormatter
        // An FCM message's name (`projects/<project>/messages/<id>`) is searched as its ID, the push's apns-id.
        let searched = Self.fcmMessageID(named: search) ?? search
        var uniqueID = searched.lowercased()
        var events = try await gateway.events(uniqueID: uniqueID)
        if events.isEmpty {
            let matches = try await gateway.loggedNotifications(matching: searched, limit: Self.searchLimit)
            if matches.count == 1, matches[0].subject.apnsID == searched.lowercased() {
                uniqueID = matches[0].uniqueID
                events = try await gateway.events(uniqueID: uniqueID)
            } else if !matches.isEmpty {
                var rows: [[String: Any]] = []
                for match in matches {
                    let latest = try await gateway.events(uniqueID: match.uniqueID).last
                    rows.append([
                        "uniqueID": match.uniqueID, "time": formatter.string(from: match.receivedAt),
                        "apnsID": match.subject.apnsID, "recipient": match.subject.recipient, "topic": match.subject.topic,
                        "state": latest.map(\.stateName) ?? "", "kind": latest?.kind.rawValue ?? "",
                    ])
                }
                values["listed"] = true
                values["matches"] = rows
                values["limited"] = matches.count == Self.searchLimit
                return Self.page("log", values)
            }
        }
        values["searched"] = true
        values["uniqueID"] = uniqueID
        values["hasEvents"] = !events.isEmpty
        values["count"] = events.count
        values["events"] = events.map { Self.timelineRow($0, formatter: formatter) }
        if let first = events.first, let subject = first.subject {
            values["subject"] = ["apnsID": subject.apnsID, "recipient": subject.recipient, "topic": subject.topic]
            if let drawing = await drawing(uniqueID: uniqueID, subject: subject, receivedAt: first.at) {
                values["drawing"] = drawing
            }
        }
        return Self.page("log", values)
    }

    /// One row of a notification's timeline, as the log page shows it and its live stream sends it.
    static func timelineRow(_ event: DeliveryEvent, formatter: ISO8601DateFormatter) -> [String: String] {
        [
            "time": formatter.string(from: event.at), "kind": event.kind.rawValue, "state": event.stateName,
            "detail": event.detail,
        ]
    }

    /// Times as the console shows them: UTC, to the millisecond.
    static var timeFormatter: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }

    /// The channels page for an app and environment (one channel when `id` is given).
    private func channelsPage(
        session: ConsoleSession, app: String, environment: String, id: String, message: String?
    ) async throws -> Response {
        let environment = APNsEnvironment(rawValue: environment) ?? .development
        var values: [String: Any] = [
            "title": "Channels", "csrf": session.csrf, "signedIn": true, "app": app, "id": id,
            "environment": environment.rawValue, "development": environment == .development,
        ]
        if let message { values["message"] = message }
        if APNsRequestHeaders.isValidTopic(app), APNsPushType.split(topic: app).suffixType == nil {
            let formatter = ISO8601DateFormatter()
            let channels =
                id.isEmpty
                ? try await gateway.channels(bundleID: app, environment: environment)
                : try await gateway.channel(id: id, bundleID: app, environment: environment).map { [$0] } ?? []
            values["hasApp"] = true
            values["hasChannels"] = !channels.isEmpty
            values["byID"] = !id.isEmpty
            values["channels"] = channels.map { channel -> [String: Any] in
                [
                    "id": channel.id, "pushType": "LiveActivity", "created": formatter.string(from: channel.createdAt),
                    "policy": channel.storagePolicy == .mostRecentMessageStored
                        ? "Most Recent Message Stored" : "No Message Stored",
                    "csrf": session.csrf, "app": app, "environment": environment.rawValue,
                ]
            }
        } else if !app.isEmpty {
            values["message"] = "\(app) is not a bundle ID."
        }
        return Self.page("channels", values)
    }

    /// A change to an app's channels from a form: `change` returns why it could not be made, `nil` when it was.
    private func changeChannels(
        _ request: Request, context: ConsoleRequestContext,
        _ change: (String, APNsEnvironment, [String: String]) async throws -> String?
    ) async throws -> Response {
        guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
        guard let form = try await Self.form(request, context: context, checkedAgainst: session) else { return Self.staleForm }
        let app = form["app"] ?? ""
        let environment = APNsEnvironment(rawValue: form["environment"] ?? "") ?? .development
        guard APNsRequestHeaders.isValidTopic(app), APNsPushType.split(topic: app).suffixType == nil else {
            return try await channelsPage(
                session: session, app: app, environment: environment.rawValue, id: "", message: "\(app) is not a bundle ID.")
        }
        let refusal = try await change(app, environment, form)
        return try await channelsPage(session: session, app: app, environment: environment.rawValue, id: "", message: refusal)
    }

    /// The send form, filled with `form` (what was sent) and showing `values` (the answer, a cURL command, a message).
    func sendPage(session: ConsoleSession, form: [String: String], values: [String: Any]) async -> Response {
        let keys = await sender?.keyIDs() ?? []
        let chosenKey = form["key"] ?? keys.first ?? ""
        let pushType = form["pushType"] ?? "alert"
        var page: [String: Any] = [
            "title": "Send", "csrf": session.csrf, "signedIn": true,
            "keys": keys.map { ["id": $0, "selected": $0 == chosenKey] as [String: Any] }, "noKeys": keys.isEmpty,
            "toChannel": form["target"] == "channel", "recipient": form["recipient"] ?? "", "topic": form["topic"] ?? "",
            "pushTypes": APNsPushType.providerTypes.map {
                ["name": $0.rawValue, "selected": $0.rawValue == pushType] as [String: Any]
            },
            "p10": form["priority"] == "10", "p5": form["priority"] == "5", "p1": form["priority"] == "1",
            "production": form["environment"] == "production",
            "expiration": form["expiration"] ?? "", "collapseID": form["collapseID"] ?? "",
            "payload": form["payload"] ?? #"{"aps":{"alert":{"title":"Hello","body":"from the console"}}}"#,
            "limit": pushType == "voip" || form["target"] == "channel" ? 5120 : 4096,
        ]
        page.merge(await fcmFormValues(form)) { $1 }
        page.merge(await webPushFormValues(form)) { $1 }
        page.merge(values) { $1 }
        return Self.page("send", page)
    }

    /// Sends what the form says through the gateway's provider API (or makes its cURL command): the values the page
    /// shows.
    func send(_ form: [String: String]) async -> [String: Any] {
        guard let sender else { return ["message": "This console has no send form (no provider API to send to)."] }
        let signer: ProviderTokenSigner
        switch await makeSigner(keyID: form["key"] ?? "", sender: sender) {
        case .success(let made): signer = made
        case .failure(let refusal): return ["message": refusal.message]
        }
        let topic = (form["topic"] ?? "").trimmingCharacters(in: .whitespaces)
        guard APNsRequestHeaders.isValidTopic(topic) else { return ["message": "\(topic) is not a bundle ID (apns-topic)."] }
        guard let pushType = APNsPushType(rawValue: form["pushType"] ?? ""), pushType.isProviderType else {
            return ["message": "Choose a push type."]
        }
        let priority = form["priority"].flatMap(Int.init).flatMap(APNsPriority.init(rawValue:))
        let expiration: APNsNotification.Expiration
        switch (form["expiration"] ?? "").trimmingCharacters(in: .whitespaces) {
        case "": expiration = .storagePolicy
        case "0": expiration = .immediately
        case let text:
            guard let seconds = Int64(text) else { return ["message": "apns-expiration takes 0 or a UNIX time."] }
            expiration = .at(Date(timeIntervalSince1970: Double(seconds)))
        }
        let collapseID = form["collapseID"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            _ = try JSONValue(parsing: Data((form["payload"] ?? "").utf8))
        } catch let error as JSONValue.ReadingError where error.unrepresentableNumber != nil {
            // JSON, but not a payload an iPhone can read: said here, with the key, rather than as APNs' 400.
            return ["message": "Not sent: \(error). Send it as a string."]
        } catch {
            // Not JSON at all: the gateway answers for it (400 BadRequestPayload), as APNs would.
        }
        let suffixed =
            APNsPushType.split(topic: topic).suffixType == nil && pushType != .mdm ? topic + pushType.topicSuffix : topic
        let notification = APNsNotification(
            pushType: pushType, topic: suffixed, priority: priority, expiration: expiration, collapseID: collapseID,
            payload: Data((form["payload"] ?? "").utf8))
        let recipient = (form["recipient"] ?? "").trimmingCharacters(in: .whitespaces)
        let toChannel = form["target"] == "channel"
        let environment = APNsEnvironment(rawValue: form["environment"] ?? "") ?? .development
        guard let base = await sender.providerURL(environment) else {
            return [
                "message": environment == .production
                    ? "This gateway has no production provider API (herald gateway --production-port)."
                    : "The gateway's development provider API is not listening."
            ]
        }
        if form["action"] == "curl" {
            return [
                "curl": Self.curlCommand(
                    notification, to: recipient, channel: toChannel, base: base,
                    caFile: sender.certificateAuthorityFile, jwt: (try? signer.token()) ?? "")
            ]
        }
        let client: APNsClient
        do {
            client = try APNsClient(
                server: APNsServer(url: base, certificateAuthorityFile: sender.certificateAuthorityFile),
                authentication: .token(signer), retryPolicy: .never, clock: clock, logger: logger)
        } catch {
            return ["message": "Cannot reach the provider API: \(error)"]
        }
        let result: APNsResult
        do {
            result =
                toChannel
                ? try await client.broadcast(notification, on: recipient)
                : try await client.send(notification, to: recipient)
        } catch let reason as APNsReason {
            try? await client.shutdown()
            await remember(form, status: reason.status, reason: reason.reason)
            return ["message": "Not sent: APNs would answer \(reason.status) \(reason.reason)."]
        } catch {
            try? await client.shutdown()
            await remember(form, status: 0, reason: "\(error)")
            return ["message": "Not sent: \(error)"]
        }
        try? await client.shutdown()
        await remember(
            form, status: result.status, reason: result.reasonText ?? result.failure, apnsID: result.apnsID ?? result.requestID,
            uniqueID: result.uniqueID)
        logger.info("Console sent a notification", metadata: ["apns.status": "\(result.status)", "apns.topic": "\(suffixed)"])
        var answer: [String: Any] = [
            "status": result.status == 0 ? "no answer" : "\(result.status)",
            "reason": result.reasonText ?? result.failure ?? "",
            "kind": result.isSuccess ? "delivered" : "discarded",
        ]
        if let apnsID = result.apnsID { answer["apnsID"] = apnsID }
        if let requestID = result.requestID { answer["requestID"] = requestID }
        if let uniqueID = result.uniqueID { answer["uniqueID"] = uniqueID }
        return ["result": answer]
    }

    /// Apple's curl recipe ("Sending push notifications using command-line tools") for the same request, with a
    /// provider token valid for an hour.
    static func curlCommand(
        _ notification: APNsNotification, to recipient: String, channel: Bool, base: URL, caFile: String?, jwt: String
    ) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var lines = ["curl --http2 -v"]
        if let caFile { lines.append("  --cacert \(quoted(caFile))") }
        var headers = notification.headers
        if channel {
            headers =
                [("apns-push-type", "LiveActivity"), ("apns-channel-id", recipient)]
                + notification.headers.filter { $0.name == "apns-priority" || $0.name == "apns-expiration" }
            if !headers.contains(where: { $0.name == "apns-expiration" }) { headers.append(("apns-expiration", "0")) }
        }
        for (name, value) in headers { lines.append("  --header \(quoted("\(name): \(value)"))") }
        lines.append("  --header \(quoted("authorization: bearer \(jwt)"))")
        lines.append("  --data \(quoted(String(decoding: notification.payload, as: UTF8.self)))")
        let bundleID = APNsPushType.split(topic: notification.topic).bundleID
        let path = channel ? "/4/broadcasts/apps/\(bundleID)" : "/3/device/\(recipient)"
        lines.append("  \(quoted(base.absoluteString + path))")
        return lines.joined(separator: " \\\n")
    }

    /// The tools page, with the result of a check when there is one.
    private func tools(
        _ request: Request, context: ConsoleRequestContext,
        check: (ConsoleSession, [String: String]) async -> [String: Any]
    ) async throws -> Response {
        guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
        let keys = await sender?.keyIDs() ?? []
        var values: [String: Any] = [
            "title": "Tools", "csrf": session.csrf, "signedIn": true, "keys": keys.map { ["id": $0] }, "hasKeys": !keys.isEmpty,
        ]
        if request.method == .post {
            guard let form = try await Self.form(request, context: context, checkedAgainst: session) else {
                return Self.staleForm
            }
            values.merge(await check(session, form)) { $1 }
        }
        return Self.page("tools", values)
    }

    /// The JWT generator: a provider token signed now with the key's `.p8` (valid an hour, as APNs takes it), with its
    /// header and claims.
    private func generatedToken(keyID: String) async -> [String: Any] {
        guard let sender else { return ["generateMessage": "This console has no keys to sign with."] }
        let signer: ProviderTokenSigner
        switch await makeSigner(keyID: keyID, sender: sender) {
        case .success(let made): signer = made
        case .failure(let refusal): return ["generateMessage": refusal.message]
        }
        guard let token = try? signer.token() else {
            return ["generateMessage": "AuthKey_\(keyID).p8 could not sign a provider token."]
        }
        let parts = await TokenChecks.providerToken(token, gateway: gateway, now: clock.now)
        return ["generated": token, "generatedKey": keyID, "generatedHeader": parts.header, "generatedClaims": parts.claims]
    }

    /// Why no provider token can be signed with a key.
    struct KeyRefusal: Error {
        var message: String
    }

    /// A signer of provider tokens with the key `keyID`: its `.p8` from `sender`'s key directory, its team from the
    /// store.
    private func makeSigner(keyID: String, sender: ConsoleSender) async -> Result<ProviderTokenSigner, KeyRefusal> {
        guard let pem = await sender.key(keyID), let key = try? await gateway.providerKey(id: keyID) else {
            return .failure(
                KeyRefusal(message: "No key \(keyID) to sign with: its .p8 belongs in the data directory as AuthKey_\(keyID).p8.")
            )
        }
        do {
            return .success(try ProviderTokenSigner(pem: pem, keyID: key.keyID, teamID: key.teamID, clock: clock))
        } catch {
            return .failure(KeyRefusal(message: "AuthKey_\(keyID).p8 is not a P-256 private key (PEM)."))
        }
    }

    /// `POST /login`: the form's CSRF token must be its login cookie's; the operator token must be known and not revoked.
    /// Wrong tokens from one address are throttled; the right one logs in whatever came from its address before (every
    /// local user is 127.0.0.1, and an operator token cannot be guessed).
    private func login(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let address = context.remoteAddress
        let now = clock.now
        let form = try await Self.form(request, context: context)
        guard let csrf = request.cookies[Self.loginCookieName]?.value, Self.same(form["csrf"], csrf) else {
            throttle.failed(address, at: now)
            return Self.staleForm
        }
        let hash = OperatorToken.hash(form["token"] ?? "")
        guard let record = try await store.operatorToken(hash: hash), OperatorToken.admits(record, at: now) else {
            guard throttle.admits(address, at: now) else {
                logger.warning("Console login refused: too many failures", metadata: ["client.address": "\(address)"])
                return Self.page(
                    "error",
                    ["title": "Too many attempts", "message": "Too many failed logins from this address; wait a minute."],
                    status: .tooManyRequests)
            }
            throttle.failed(address, at: now)
            logger.notice(
                "Console login refused: unknown, revoked or expired operator token", metadata: ["client.address": "\(address)"])
            return Self.page(
                "login",
                [
                    "title": "Log in", "csrf": csrf,
                    "message":
                        "That is not a valid operator token (unknown, revoked, or older than 30 days): make one with herald console token.",
                ],
                status: .unauthorized)
        }
        // A new session (a new cookie) for the operator: one made before the login cannot be carried over.
        context.sessions.createSession(ConsoleSession(csrf: OperatorToken.make(), operatorHash: hash))
        logger.info("Console login", metadata: ["client.address": "\(address)"])
        var response = Response.redirect(to: "/log", type: .normal)
        response.setCookie(Self.loginCookie("", maxAge: 0))
        return response
    }

    /// The cookie the login form's CSRF token is sent back in.
    static let loginCookieName = "herald_login"

    /// The login form's cookie: for `/login` only, not readable by scripts, never sent from another site.
    ///
    /// - Parameters:
    ///   - csrf: The form's CSRF token.
    ///   - maxAge: How long it lasts, in seconds; 0 ends it.
    private static func loginCookie(_ csrf: String, maxAge: Int = 3600) -> Cookie {
        Cookie(name: loginCookieName, value: csrf, maxAge: maxAge, path: "/login", httpOnly: true, sameSite: .strict)
    }

    /// How often a live delivery log looks for new events.
    static let liveLogInterval: Duration = .milliseconds(250)

    /// Server-Sent Events: each delivery-log event of `id` as it is written — those there already first — one
    /// `event: state` with the row as JSON (`time`, `kind`, `state`, `detail`), for `duration`.
    private static func streamEvents(
        of id: String, from gateway: any ConsoleGateway, for duration: Duration, to writer: inout any ResponseBodyWriter
    ) async throws {
        let formatter = timeFormatter
        var sent = 0
        let end = ContinuousClock.now + duration
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        // A console that stops (Ctrl-C on `herald up`) ends its streams at once: the browser reconnects to the next.
        while ContinuousClock.now < end && !Task.isCancelled && !Task.isShuttingDownGracefully {
            let events = (try? await gateway.events(uniqueID: id)) ?? []
            for event in events.dropFirst(sent) {
                let row = timelineRow(event, formatter: formatter)
                let json =
                    (try? JSONSerialization.data(withJSONObject: row, options: [.sortedKeys]))
                    .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                try await writer.write(ByteBuffer(string: "event: state\ndata: \(json)\n\n"))
            }
            sent = max(sent, events.count)
            try await Task.sleep(for: liveLogInterval)
        }
        try await writer.finish(nil)
    }

    /// The session of a person logged in with an operator token that still holds; `nil` otherwise.
    func signedIn(_ context: ConsoleRequestContext) async -> ConsoleSession? {
        guard let session = context.sessions.session, let hash = session.operatorHash,
            let record = try? await store.operatorToken(hash: hash), OperatorToken.admits(record, at: clock.now)
        else { return nil }
        return session
    }

    static func page(_ name: String, _ values: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: ConsolePages.render(name, values))))
    }

    /// The posted form when it carries `session`'s CSRF token; `nil` (answer ``staleForm``) otherwise, or without a
    /// session.
    static func form(
        _ request: Request, context: ConsoleRequestContext, checkedAgainst session: ConsoleSession?
    ) async throws -> [String: String]? {
        let form = try await form(request, context: context)
        guard let session, same(form["csrf"], session.csrf) else { return nil }
        return form
    }

    /// The answer to a form without its session's CSRF token.
    static var staleForm: Response {
        page("error", ["title": "Refused", "message": "This form is out of date; reload the page."], status: .forbidden)
    }

    /// An `application/x-www-form-urlencoded` body (16 KiB at most) as its fields.
    private static func form(_ request: Request, context: ConsoleRequestContext) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: 16 * 1024)
        var fields: [String: String] = [:]
        for pair in String(buffer: body).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            if let name = parts.first { fields[name] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }

    /// Two secrets compared in time that does not depend on where they differ.
    private static func same(_ given: String?, _ expected: String) -> Bool {
        given?.isSameSecret(as: expected) ?? false
    }
}
