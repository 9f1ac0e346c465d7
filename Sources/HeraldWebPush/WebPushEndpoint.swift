import Foundation
import HeraldCore

/// A web push subscription's endpoint on the gateway's device port: `/push/<id>`, the id being the subscription's
/// device token (32 random bytes) in base64url — unguessable, and nothing else to keep.
public struct WebPushEndpoint: Sendable, Hashable {
    /// What every endpoint's path starts with.
    public static let pathPrefix = "/push/"

    /// The device token the subscription was issued as.
    public let token: DeviceToken

    /// The endpoint of a subscription issued as `token`.
    public init(token: DeviceToken) {
        self.token = token
    }

    /// Reads an endpoint from a request path (`/push/<id>`, no query); `nil` for any other path.
    public init?(path: some StringProtocol) {
        guard path.hasPrefix(Self.pathPrefix) else { return nil }
        let id = path.dropFirst(Self.pathPrefix.count)
        guard !id.isEmpty, id.count <= 200, let bytes = Data(base64URLEncoded: id), !bytes.isEmpty,
            bytes.count <= DeviceToken.maximumByteCount
        else { return nil }
        token = DeviceToken(bytes: Array(bytes))
    }

    /// The id in the path: the token's bytes, base64url without padding.
    public var id: String { Data(token.bytes).base64URLEncodedString() }

    /// The path, `/push/<id>`.
    public var path: String { Self.pathPrefix + id }

    /// The endpoint's URL on a push service at `origin` (`https://host:port`).
    public func url(origin: String) -> String { origin + path }

    /// The push service's origin for a device channel's URL: `wss://host:port/device/v1` is served beside
    /// `https://host:port` (and `ws://` beside `http://`); `nil` for anything else.
    public static func origin(ofDeviceChannel url: String) -> String? {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return nil }
        let scheme: String
        switch components.scheme?.lowercased() {
        case "wss": scheme = "https"
        case "ws": scheme = "http"
        default: return nil
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart)" + (components.port.map { ":\($0)" } ?? "")
    }
}
