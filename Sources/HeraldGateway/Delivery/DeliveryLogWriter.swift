import ServiceLifecycle

/// The delivery log's writer in the gateway's service group: it writes events as they come until the group's graceful
/// shutdown reaches it — after the listeners and the upkeep, so that what they logged is written — or the group is
/// cancelled; then it writes what is left and ends.
struct DeliveryLogWriter: Service {
    let log: DeliveryLog

    func run() async {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await log.run()
            } onGracefulShutdown: {
                log.finish()
            }
        } onCancel: {
            log.finish()
        }
    }
}
