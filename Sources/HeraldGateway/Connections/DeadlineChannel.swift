import HummingbirdCore
import Logging
import NIOCore

/// A server's child channel with a ``ConnectionDeadline`` in front: the connection has `timeout` to finish setting
/// up, from the moment it is accepted, before the deadline closes it.
struct DeadlineChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let timeout: TimeAmount
    let expired: @Sendable () -> Void

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ConnectionDeadline(timeout: timeout, expired: expired), position: .first)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
