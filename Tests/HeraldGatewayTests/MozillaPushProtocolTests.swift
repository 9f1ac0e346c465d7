import Foundation
import HeraldCore
import HeraldWebPush
import Testing

@testable import HeraldGateway

/// Mozilla's WebPush protocol, as Firefox 153 ESR sent and read it against Herald (the messages below are its own,
/// from its push log).
@Suite struct MozillaPushProtocolTests {
    @Test("Firefox's hello, register, unregister, ack, nack and ping become the device channel's messages")
    func inbound() {
        func hello(_ text: String) -> (deviceID: String, secret: String)? {
            guard case .messages(let messages) = MozillaPushProtocol.inbound(text), messages.count == 1,
                case .hello(let deviceID, let secret) = messages[0]
            else { return nil }
            return (deviceID, secret)
        }
        guard let (deviceID, secret) = hello(#"{"messageType":"hello","broadcasts":{},"use_webpush":true}"#) else {
            Issue.record("no hello")
            return
        }
        #expect(deviceID == "moz." + secret && secret.count == 32 && MozillaPushProtocol.isUAID(secret))
        #expect(
            MozillaPushProtocol.inbound(
                #"{"messageType":"hello","broadcasts":{},"use_webpush":true,"uaid":"EA3B12846a18e2652a953379d16e12fb"}"#)
                == .messages([
                    .hello(deviceID: "moz.ea3b12846a18e2652a953379d16e12fb", secret: "ea3b12846a18e2652a953379d16e12fb")
                ]))
        guard let (_, fresh) = hello(#"{"messageType":"hello","uaid":"not hex"}"#) else {
            Issue.record("no hello")
            return
        }
        #expect(fresh != "not hex" && MozillaPushProtocol.isUAID(fresh))
        #expect(
            MozillaPushProtocol.inbound(
                #"{"channelID":"1188FE5E-99ea-4800-95cf-dcdd87d0e895","messageType":"register","key":"BA0d_-x="}"#)
                == .messages([
                    .register(
                        bundleID: "moz.1188fe5e-99ea-4800-95cf-dcdd87d0e895", environment: .production,
                        purpose: .webPush(applicationServerKey: "BA0d_-x"))
                ]))
        #expect(
            MozillaPushProtocol.inbound(#"{"channelID":"a8","messageType":"unregister","code":200}"#)
                == .messages([
                    .unregister(bundleID: "moz.a8", environment: .production, purpose: .webPush(applicationServerKey: nil))
                ]))
        #expect(
            MozillaPushProtocol.inbound(
                #"{"messageType":"ack","updates":[{"channelID":"a","version":"v1","code":100},{"channelID":"b","version":"v2","code":100}]}"#
            )
                == .messages([.ack(deliveryID: "v1"), .ack(deliveryID: "v2")]))
        #expect(
            MozillaPushProtocol.inbound(#"{"messageType":"nack","channelID":"a","version":"v3","code":301}"#)
                == .nack(deliveryID: "v3", code: 301))
        #expect(MozillaPushProtocol.inbound("{}") == .ping)
        #expect(MozillaPushProtocol.inbound(#"{"messageType":"broadcast_subscribe","broadcasts":{}}"#) == .ignored)
        for text in ["[]", "x", #"{"messageType":"register","channelID":"a b"}"#, #"{"messageType":"teleport"}"#] {
            #expect(MozillaPushProtocol.inbound(text) == .invalid, "\(text)")
        }
    }

    @Test(
        "The device channel's answers and pushes as Firefox reads them: hello with the UAID, register with the endpoint, notification with the body"
    )
    func outbound() throws {
        let origin = "https://localhost:2199"
        #expect(
            MozillaPushProtocol.outbound(.welcome(deviceID: "moz.ab12"), serviceOrigin: origin)
                == #"{"messageType":"hello","uaid":"ab12","status":200,"use_webpush":true,"broadcasts":{}}"#)
        let token = DeviceToken.random()
        #expect(
            MozillaPushProtocol.outbound(
                .registered(
                    bundleID: "moz.c1", environment: .production, purpose: .webPush(applicationServerKey: nil), token: token.hex),
                serviceOrigin: origin)
                == #"{"messageType":"register","channelID":"c1","status":200,"pushEndpoint":"\#(WebPushEndpoint(token: token).url(origin: origin))"}"#
        )
        let push = DevicePush(
            deliveryID: "v1", token: token.hex, topic: "moz.c1/x", bundleID: "moz.c1", pushType: "webpush", priority: 10,
            apnsID: "v1", collapseID: nil, payload: "AAEC", fromStorage: true)
        #expect(
            MozillaPushProtocol.outbound(.push(push), serviceOrigin: origin)
                == #"{"messageType":"notification","channelID":"c1","version":"v1","data":"AAEC","headers":{"encoding":"aes128gcm"}}"#
        )
        var empty = push
        empty.payload = ""
        #expect(
            MozillaPushProtocol.outbound(.push(empty), serviceOrigin: origin)
                == #"{"messageType":"notification","channelID":"c1","version":"v1"}"#)
        var alert = push
        alert.pushType = "alert"
        #expect(MozillaPushProtocol.outbound(.push(alert), serviceOrigin: origin) == nil)
        #expect(MozillaPushProtocol.outbound(.error("x"), serviceOrigin: origin) == nil)
    }

    @Test("Issue 71 (5): a Firefox profile's UAID, its credential, is logged as its first 8 digits; other device IDs whole")
    func loggableDeviceIDs() {
        #expect(MozillaPushProtocol.loggable("moz.ea3b12846a18e2652a953379d16e12fb") == "moz.ea3b1284…")
        #expect(MozillaPushProtocol.loggable("vm-7e2e8888") == "vm-7e2e8888")
        #expect(MozillaPushProtocol.loggable("moz.ab12") == "moz.ab12")
    }
}
