import Foundation
import HeraldCore
import HeraldWebPush
import Testing

/// A subscription's endpoint and token purpose: the forms the gateway and the device agree on.
@Suite struct WebPushEndpointTests {
    @Test("An endpoint's id is its token's bytes in base64url, read back from the path; anything else is no endpoint")
    func endpointRoundTrip() throws {
        let token = DeviceToken.random()
        let endpoint = WebPushEndpoint(token: token)
        #expect(endpoint.id.count == 43)
        #expect(!endpoint.id.contains("=") && !endpoint.id.contains("+") && !endpoint.id.contains("/"))
        #expect(WebPushEndpoint(path: endpoint.path)?.token == token)
        #expect(endpoint.url(origin: "https://localhost:2199") == "https://localhost:2199/push/\(endpoint.id)")
        for path in [
            "/push/", "/push/%%", "/push/a b", "/3/device/\(token.hex)", "/push", "/push/" + String(repeating: "A", count: 201),
        ] {
            #expect(WebPushEndpoint(path: path) == nil, "\(path)")
        }
    }

    @Test("The push service's origin is the device channel's host and port, https beside wss and http beside ws")
    func serviceOrigin() {
        #expect(WebPushEndpoint.origin(ofDeviceChannel: "wss://localhost:2199/device/v1") == "https://localhost:2199")
        #expect(WebPushEndpoint.origin(ofDeviceChannel: "ws://10.0.0.2:80/device/v1") == "http://10.0.0.2:80")
        #expect(WebPushEndpoint.origin(ofDeviceChannel: "wss://push.example.com/device/v1") == "https://push.example.com")
        #expect(WebPushEndpoint.origin(ofDeviceChannel: "https://localhost:2199") == nil)
    }

    @Test("A subscription's token purpose keeps its applicationServerKey and takes only web push messages")
    func purpose() {
        let key = String(repeating: "B", count: 87)
        #expect(TokenPurpose.webPush(applicationServerKey: key).rawValue == "webpush:" + key)
        #expect(TokenPurpose(rawValue: "webpush:" + key) == .webPush(applicationServerKey: key))
        #expect(TokenPurpose(rawValue: "webpush") == .webPush(applicationServerKey: nil))
        #expect(TokenPurpose(rawValue: "webpush:") == nil)
        for type in APNsPushType.allCases {
            #expect(TokenPurpose.webPush(applicationServerKey: nil).accepts(type) == (type == .webpush), "\(type)")
            // Issue 70: the app's own token takes its notifications only, as at Apple.
            #expect(TokenPurpose.app.accepts(type) == (type == .alert || type == .background), "\(type)")
        }
        #expect(!APNsPushType.providerTypes.contains(.webpush))
        #expect(APNsPushType.providerTypes.count == APNsPushType.allCases.count - 1)
    }
}
