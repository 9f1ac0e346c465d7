import Crypto
import Foundation
import GatewayTestSupport
import HeraldConsole
import HeraldCore
import HeraldGateway
import HeraldGatewayStore
import HeraldWebPush
import Testing

extension ConsoleServerTests {
    @Test(
        "Send a web push: the subscription's JSON and a VAPID key from the data directory's webpush folder — encrypted to the subscription's keys, posted to the gateway's own web push service: 201 with its Location linked to the delivery log, the message stored for the offline device decrypts; another key is 403 BadJwtToken; a subscription that is not JSON or not this gateway's is refused; the history keeps it and sends it again"
    )
    func sendWebPush() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let applicationServerKey = Self.vapidKey.publicKey.x963Representation.base64URLEncodedString()
            let record = try await harness.store.activeToken(
                deviceID: "browser-\(UUID().uuidString.prefix(6))", bundleID: "webapp.news.example.com",
                environment: .development, purpose: .webPush(applicationServerKey: applicationServerKey), at: Date())
            let userAgent = WebPushCipher.UserAgentKeys()
            let endpoint = WebPushEndpoint(token: try #require(DeviceToken(hex: record.token)))
                .url(origin: "https://localhost:\(harness.ports.device)")
            let subscription = WebPushAgentSubscriptionJSON(endpoint: endpoint, keys: userAgent.subscription)

            let page = try await browser.get("/send")
            let csrf = try #require(page.csrf)
            #expect(page.body.contains(#"<form method="post" action="/send/webpush" id="sendWebPush">"#), "\(page.body)")
            #expect(page.body.contains(#"<option value="demo-vapid.pem" selected>"#), "\(page.body)")

            func send(
                _ subscription: String, key: String = "demo-vapid.pem", message: String
            ) async throws
                -> ConsoleServerTests.Answer
            {
                try await browser.post(
                    "/send/webpush",
                    [
                        ("csrf", csrf), ("webPushSubscription", subscription), ("webPushKey", key),
                        ("webPushSubject", "mailto:ops@example.com"), ("webPushTTL", "600"), ("webPushUrgency", "high"),
                        ("webPushTopic", ""), ("webPushMessage", message), ("action", "send"),
                    ])
            }
            let message = #"{"web_push":8030,"notification":{"title":"From the console","body":"<b>hi</b>"}}"#
            let sent = try await send(subscription, message: message)
            #expect(
                sent.body.contains(#"<table class="result" id="webPushResult">"#) && sent.body.contains("<td>201 </td>"),
                "\(sent.body)")
            let messageID = try #require(
                sent.body.components(separatedBy: #"<a href="/log?id="#).dropFirst().first?.prefix { $0 != "\"" })
            #expect(sent.body.contains("<code>/m/\(messageID)</code>"), "\(sent.body)")
            let stored = try await harness.store.storedNotifications(deviceID: record.deviceID)
            #expect(stored.count == 1 && stored.first?.priority == .immediate, "Urgency high is priority 10: \(stored)")
            let body = try #require(stored.first.flatMap { Data(base64URLEncoded: String(decoding: $0.payload, as: UTF8.self)) })
            #expect(String(decoding: try WebPushCipher.decrypt(body, with: userAgent), as: UTF8.self) == message)
            await harness.gateway.flushDeliveryLog()
            let log = try await browser.get("/log?id=\(messageID)")
            #expect(log.body.contains("Stored - Device Offline"), "\(log.body)")

            let otherKey = try await send(subscription, key: "other.pem", message: message)
            #expect(otherKey.body.contains("<td>403 BadJwtToken</td>"), "\(otherKey.body)")
            let notJSON = try await send("{not json", message: message)
            #expect(notJSON.body.contains("is not a PushSubscription"), "\(notJSON.body)")
            let elsewhere = try await send(
                subscription.replacingOccurrences(of: "/push/", with: "/elsewhere/"), message: message)
            #expect(elsewhere.body.contains("is not an endpoint of this gateway"), "\(elsewhere.body)")

            let history = try await browser.get("/history")
            #expect(history.body.contains("web push subscription"), "\(history.body)")
            let sends = try await browser.consoleStore.consoleSends(since: .distantPast, limit: 10)
            #expect(sends.map(\.status) == [403, 201], "refusals before sending are not kept")
            let first = try #require(sends.last)
            #expect(first.uniqueID == String(messageID))
            let again = try await browser.post("/history/resend", [("csrf", csrf), ("id", first.id)])
            #expect(again.body.contains("<td>201 </td>"), "\(again.body)")
            #expect(try await harness.store.storedNotifications(deviceID: record.deviceID).count == 2)
        }
    }
}

/// A PushSubscription's JSON, as `PushSubscription.toJSON()` gives it.
private func WebPushAgentSubscriptionJSON(endpoint: String, keys: WebPushCipher.SubscriptionKeys) -> String {
    #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(keys.p256dh.base64URLEncodedString())","auth":"\#(keys.auth.base64URLEncodedString())"}}"#
}
