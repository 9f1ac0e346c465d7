import ServiceLifecycle

/// One of the gateway's listeners (a provider API's or the device port's) in its service group: a port it cannot
/// listen on is a ``ListenerAddressInUse`` that names the listener, so the command can say what to do, not only
/// `errno 98`.
struct GatewayListener: Service {
    let service: any Service
    let listener: ListenerAddressInUse.Listener
    let host: String
    let port: Int

    func run() async throws {
        do {
            try await service.run()
        } catch {
            throw ListenerAddressInUse.from(error, listener: listener, host: host, port: port) ?? error
        }
    }
}
