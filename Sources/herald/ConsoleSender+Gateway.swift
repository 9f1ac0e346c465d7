import Foundation
import HeraldConsole
import HeraldGateway

extension ConsoleSender {
    /// A sender for `gateway`'s first TLS provider API of each environment, trusting its CA, with the keys in
    /// `keyDirectory`.
    init(gateway: HeraldGateway, keyDirectory: URL) {
        let listeners = gateway.configuration.providerListeners
        self.init(
            providerURL: { environment in
                guard
                    let index = listeners.firstIndex(where: {
                        $0.usesTLS && $0.environment == environment && $0.api == .provider
                    }), let ports = try? await gateway.ports(), index < ports.provider.count
                else { return nil }
                return URL(string: "https://localhost:\(ports.provider[index])")
            },
            certificateAuthorityFile: gateway.certificateAuthority?.certificateURL.path, keyDirectory: keyDirectory)
    }
}
