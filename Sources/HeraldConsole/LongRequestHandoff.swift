import HTTPTypes
import HeraldCore
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Takes the requests that wait — a listing with `wait`, an event stream — off Hummingbird's connection task and
/// serves each in a task of its own, which this handler owns and cancels when the client goes away.
///
/// Why: a Swift task keeps every slab of task memory it ever used until it ends, and a connection's task goes deep
/// (the HTTP channel, the router, each middleware, the route): a request that waits inside it holds some 40 KB for as
/// long as it waits. Here a request's task is made once it has a place at the API's ``ConcurrencyGate``, its route runs
/// in a child task, and a wait that has to wait is handed on as a ``WaitingAnswer`` — no task waits for it; a stream's
/// task stays shallow (issue 64: 1,000 waits and 100 streams in +18.5 MB). The route is the router's own, so a
/// handed-off request is answered exactly as any other.
///
/// Sits after the HTTP/1 codec, before Hummingbird's handlers. A handed-off request's connection closes once it is
/// answered (`Connection: close`); anything the client sends after it on that connection is not read. A request
/// pipelined behind one Hummingbird still answers waits for that answer, so the answers keep their order.
final class LongRequestHandoff: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Answers a handed-off request: the router's responder, with a context made for the channel.
    typealias Respond = @Sendable (Request, any Channel) async -> Response

    private enum Stage {
        /// Requests go to Hummingbird.
        case passing
        /// A request to hand off is being read (its head; its body, if any, is not read).
        case reading(HTTPRequest)
        /// A request to hand off, read, waiting for Hummingbird's answers before it to be written.
        case queued(HTTPRequest)
        /// The handed-off request is being answered; the connection closes after it.
        case answering(AnswerUnderWay)
        /// The client went away, or the answer was written: nothing more is read or answered.
        case done
    }

    private let respond: Respond
    private let gate: ConcurrencyGate
    private let logger: Logger
    private var stage = Stage.passing
    /// Requests passed to Hummingbird and not answered yet.
    private var inFlight = 0

    /// A handler that hands off what ``handsOff(_:)`` picks to `respond`.
    ///
    /// - Parameters:
    ///   - respond: Answers a handed-off request.
    ///   - gate: What the routes run through, a few at once (the API's ``TestBedAPI/deepWork``).
    ///   - logger: Where a failed answer is logged.
    init(respond: @escaping Respond, gate: ConcurrencyGate, logger: Logger) {
        self.respond = respond
        self.gate = gate
        self.logger = logger
    }

    /// Whether `head` waits: a test-bed API `GET` with a `wait` parameter, or the event stream.
    static func handsOff(_ head: HTTPRequest) -> Bool {
        guard head.method == .get, let path = head.path, path.hasPrefix("/api/v1/") else { return false }
        let uri = URI(path)
        return uri.queryParameters["wait"] != nil || uri.path.trimmingTrailingSlashes == "/api/v1/events"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A channel keeps its receive buffer between reads; a test-bed or console request is a few hundred bytes, so a
        // connection held by a wait need not keep NIO's 2 KB one (it grows for larger requests).
        try? context.channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 256, initial: 512, maximum: 65_536))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (stage, part) {
        case (.passing, .head(let head)) where Self.handsOff(head):
            stage = .reading(head)
        case (.passing, _):
            if case .head = part { inFlight += 1 }
            context.fireChannelRead(data)
        case (.reading(let head), .end):
            stage = .queued(head)
            startIfClear(context: context)
        case (.reading, _), (.queued, _), (.answering, _), (.done, _):
            break  // a handed-off request's body, or what came after it: its connection closes after the answer
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inFlight -= 1
            context.write(data, promise: promise)
            startIfClear(context: context)
        } else {
            context.write(data, promise: promise)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A client that closed its side is gone: it reads no answer (HTTP/1.1 clients do not half-close).
        if let event = event as? ChannelEvent, event == .inputClosed { end() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
    }

    /// Starts the queued request once every answer before it is written.
    private func startIfClear(context: ChannelHandlerContext) {
        guard case .queued(let head) = stage, inFlight == 0 else { return }
        let channel: any Channel = context.channel
        let out = NIOLoopBound(context, eventLoop: context.eventLoop)
        let respond = self.respond
        let logger = self.logger
        let gate = self.gate
        let underWay = AnswerUnderWay()
        stage = .answering(underWay)
        // The answer's task is made once it has a place among the few that route at once.
        let ticket = gate.enter {
            underWay.task.hold(
                Task { @Sendable in
                    await Self.answer(
                        head, on: channel, respond: respond, gate: gate, out: out, underWay: underWay, logger: logger)
                    underWay.task.ended()
                })
        }
        if let ticket { underWay.onCancel { gate.withdraw(ticket) } }
    }

    /// Cancels an answer under way: its client is gone.
    private func end() {
        if case .answering(let underWay) = stage { underWay.cancel() }
        stage = .done
    }

    /// Answers `head` with what `respond` says — the route in a child task, holding a place at `gate` until it is
    /// done — writes it on the handler's context, and closes the connection; or, for a wait that has to wait, hands
    /// the wait on and ends: the wait writes its answer when it comes.
    private static func answer(
        _ head: HTTPRequest, on channel: any Channel, respond: @escaping Respond, gate: ConcurrencyGate,
        out: NIOLoopBound<ChannelHandlerContext>, underWay: AnswerUnderWay, logger: Logger
    ) async {
        let writer = ChannelBodyWriter(out: out)
        // The route in a child task, whose deep frames go with it: a stream's task, which lives on, stays shallow.
        async let routed = respond(Request(head: head, body: RequestBody(buffer: ByteBuffer())), channel)
        var response = await routed
        gate.leave()  // the deep part is done: the next may route
        do {
            if let length = response.body.contentLength, response.headers[.contentLength] == nil {
                response.headers[.contentLength] = String(length)
            }
            response.headers[.connection] = "close"
            try await writer.send(.head(response.head))
            try await response.body.write(writer)
        } catch {
            logger.debug("Test-bed API: a waiting answer was not written", metadata: ["error": "\(error)"])
        }
        // A wait that has to wait goes on without this task: its answer is written when it comes.
        if let waiting = writer.held() {
            underWay.onCancel { waiting.cancel() }
            waiting.start { answer in writer.deliver(answer) }
            return
        }
        try? await writer.close()
    }
}

/// What a handed-off answer's client going away cancels: the task answering it, while it runs, then the wait it
/// handed on.
final class AnswerUnderWay: Sendable {
    /// The task answering, held until it ends.
    let task = HeldTask()
    private let state = Mutex<(cancelled: Bool, actions: [@Sendable () -> Void])>((false, []))

    /// Runs `action` when the answer is cancelled (at once if it was).
    func onCancel(_ action: @escaping @Sendable () -> Void) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.actions.append(action) }
            return state.cancelled
        }
        if cancelled { action() }
    }

    /// Cancels the answer: its task, if it runs, and every action, once.
    func cancel() {
        let actions = state.withLock { state in
            defer { state = (true, []) }
            return state.actions
        }
        task.cancel()
        for action in actions { action() }
    }
}

/// A task held until it ends, to cancel it: a finished task's handle keeps all the task memory the task used, so a
/// task that ended is not kept (1,000 waits' handles held ~3 MB, issue 64).
final class HeldTask: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, ended: Bool, cancelled: Bool)>((nil, false, false))

    /// Holds `task`, unless it ended already; cancels it if ``cancel()`` came first.
    func hold(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled && !state.ended { state.task = task }
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Forgets the task: it ended (called by the task itself, last).
    func ended() {
        state.withLock { state in
            state.ended = true
            state.task = nil
        }
    }

    /// Cancels the task, now or once it is held.
    func cancel() {
        let task = state.withLock { state in
            defer { (state.task, state.cancelled) = (nil, true) }
            return state.task
        }
        task?.cancel()
    }
}

/// Writes a handed-off answer's parts on its handler's context, one at a time, each once the last is flushed; and
/// takes the wait of an answer that has to wait (``APIListing/later(_:)``), to write its JSON when it comes.
struct ChannelBodyWriter: ResponseBodyWriter, Sendable {
    let out: NIOLoopBound<ChannelHandlerContext>
    private let waiting = HeldWait()

    init(out: NIOLoopBound<ChannelHandlerContext>) {
        self.out = out
    }

    /// Writes and flushes `part`.
    func send(_ part: HTTPResponsePart) async throws {
        let out = self.out
        try await out.eventLoop.flatSubmit {
            let promise = out.eventLoop.makePromise(of: Void.self)
            out.value.writeAndFlush(NIOAny(part), promise: promise)
            return promise.futureResult
        }.get()
    }

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await send(.body(buffer))
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await send(.end(trailingHeaders))
    }

    /// Closes the connection (after what was written).
    func close() async throws {
        let out = self.out
        try await out.eventLoop.submit { out.value.close(promise: nil) }.get()
    }

    /// Takes the wait the answer's body hands on, instead of waiting for it in a task.
    func hold(_ wait: WaitingAnswer) {
        waiting.value.withLock { $0 = wait }
    }

    /// The wait the body handed on, if it did.
    func held() -> WaitingAnswer? {
        waiting.value.withLock { $0 }
    }

    /// Writes a wait's answer — its JSON and the end — and closes the connection, from any thread.
    func deliver(_ answer: APIAnswer) {
        let out = self.out
        out.eventLoop.execute {
            out.value.write(NIOAny(HTTPResponsePart.body(answer.bodyBuffer)), promise: nil)
            out.value.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: nil)
            out.value.close(promise: nil)
        }
    }

    private final class HeldWait: Sendable {
        let value = Mutex<WaitingAnswer?>(nil)
    }
}

extension String {
    /// The text without trailing slashes (`/api/v1/events/` → `/api/v1/events`).
    fileprivate var trimmingTrailingSlashes: Substring {
        var text = self[...]
        while text.count > 1, text.hasSuffix("/") { text.removeLast() }
        return text
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the requests that wait handed off (``LongRequestHandoff``) to `responder`: the one the application
    /// answers every other request with.
    ///
    /// - Parameters:
    ///   - responder: The router's responder.
    ///   - gate: What the routes of the requests that wait run through (the API's ``TestBedAPI/deepWork``).
    ///   - logger: The server's logger.
    static func http1HandingOffWaits(
        to responder: RouterResponder<ConsoleRequestContext>, gate: ConcurrencyGate, logger: Logger
    ) -> HTTPServerBuilder {
        .http1(
            configuration: .init(
                additionalChannelHandlers: [
                    LongRequestHandoff(
                        respond: { request, channel in
                            let context = ConsoleRequestContext(
                                source: ApplicationRequestContextSource(channel: channel, logger: logger))
                            do {
                                return try await responder.respond(to: request, context: context)
                            } catch let error as any HTTPResponseError {
                                return (try? error.response(from: request, context: context))
                                    ?? Response(status: error.status)
                            } catch {
                                logger.error("Test-bed API: a waiting request failed", metadata: ["error": "\(error)"])
                                return Response(status: .internalServerError)
                            }
                        }, gate: gate, logger: logger)
                ],
                // Hummingbird's idle timer counts from the connection's start and each response's end, and is put off
                // only by a whole request part: an idle connection, or a slow-loris head, is closed after it.
                idleTimeout: consoleIdleTimeout))
    }

    /// How long a console connection may go without a whole request part while no request is being answered.
    static let consoleIdleTimeout = TimeAmount.seconds(20)

    /// The console's connection cap: a share of the process's open-file limit (`ConnectionCaps`).
    static var consoleConnectionCap: Int {
        ConnectionCaps.ofThisProcess(providerListeners: 0).console
    }
}
