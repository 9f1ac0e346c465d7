import HeraldGateway

/// Runs `body`, turning a listener's port that is in use into a message that says which port and what to do.
///
/// - Parameters:
///   - command: The command, as the message names it (`herald up`).
///   - providerOptions: The option that sets each provider listener's port, in the configuration's order.
///   - deviceOption: The option that sets the device channel's port.
func explainingPortsInUse(
    command: String, providerOptions: [String], deviceOption: String, _ body: () async throws -> Void
) async throws {
    do {
        try await body()
    } catch let error as ListenerAddressInUse {
        let option: String =
            switch error.listener {
            case .provider(let index): index < providerOptions.count ? providerOptions[index] : "--port"
            case .device: deviceOption
            case .console: "--console-port"
            case .fcm: "--fcm-port"
            case .deviceAPI: "--api-port"
            }
        throw CommandFailure(
            "port \(error.port) is in use — is another `\(command)` running? Stop it, or pass \(option) with another port (0 picks a free one)."
        )
    }
}
