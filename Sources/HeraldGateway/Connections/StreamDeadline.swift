import NIOCore

/// An HTTP/2 stream's deadline: the stream is reset (closed) unless its client sends the whole request in time, and
/// then takes the answer in time — a client that never opens its flow-control window for the answer's body (a DATA
/// frame; HEADERS are not flow-controlled) would otherwise hold the stream, and with it the connection, forever.
/// (Found by fuzzing the provider port: a client whose SETTINGS set an initial window of 2 bytes.)
struct StreamDeadline {
    /// How long each part may take.
    let timeout: TimeAmount
    private var scheduled: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// Whether a deadline is set.
    var isCounting: Bool { scheduled != nil }

    /// Starts counting for the request.
    mutating func start(_ context: ChannelHandlerContext) {
        let stream = NIOLoopBound(context.channel, eventLoop: context.eventLoop)
        scheduled = context.eventLoop.scheduleTask(in: timeout) { stream.value.close(promise: nil) }
    }

    /// Stops counting (the request is complete, or the handler is removed).
    mutating func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }

    /// Counts again for the answer's body: stopped once `written` completes.
    mutating func untilWritten(_ written: EventLoopFuture<Void>, _ context: ChannelHandlerContext) {
        start(context)
        let deadline = scheduled
        written.whenComplete { _ in deadline?.cancel() }
    }
}
