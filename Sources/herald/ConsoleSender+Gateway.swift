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
            certificateAuthorityFile: gateway.certificateAuthority?.certificateURL.path, keyDirectory: keyDirectory,
            fcmURL: {
                guard gateway.configuration.fcmPort != nil, let port = try? await gateway.ports().fcm else { return nil }
                // The FCM port takes plain HTTP; the console runs beside the gateway.
                let host = gateway.configuration.fcmHost
                let reachable = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
                return URL(string: "http://\(reachable):\(port)")
            },
            webPushURL: {
                // The web push service is on the device port; `aud` is its origin as the sender names it.
                guard let port = try? await gateway.ports().device else { return nil }
                return URL(string: "\(gateway.configuration.deviceChannelUsesTLS ? "https" : "http")://localhost:\(port)")
            })
    }
}
