import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldWebPush
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

extension ConsoleServer {
    /// The web push form's fields a history entry keeps.
    static let sentWebPushFields = [
        "kind", "webPushSubscription", "webPushKey", "webPushSubject", "webPushTTL", "webPushUrgency", "webPushTopic",
        "webPushMessage",
    ]

    /// The web push part of the send page: the VAPID keys to sign with, the subscription and message as last sent (or
    /// `herald up`'s demo web app's subscription and a Declarative Web Push message), `form`'s choices kept.
    func webPushFormValues(_ form: [String: String]) async -> [String: Any] {
        guard let sender, await sender.webPushURL() != nil else { return [:] }
        let keys = await sender.vapidKeyNames()
        let chosen = form["webPushKey"] ?? (keys.contains("demo-vapid.pem") ? "demo-vapid.pem" : keys.first ?? "")
        var subscription = form["webPushSubscription"]
        if subscription == nil, let demo = await sender.webPushFile("demo-subscription.json") {
            subscription = String(decoding: demo, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let urgency = form["webPushUrgency"] ?? "normal"
        return [
            "hasWebPush": true, "noVAPIDKeys": keys.isEmpty,
            "vapidKeys": keys.map { ["name": $0, "selected": $0 == chosen] as [String: Any] },
            "webPushSubscription": subscription ?? "",
            "webPushSubject": form["webPushSubject"] ?? "mailto:operator@example.com",
            "webPushTTL": form["webPushTTL"] ?? "60", "webPushTopic": form["webPushTopic"] ?? "",
            "urgencies": WebPushUrgency.allCases.map {
                ["name": $0.rawValue, "selected": $0.rawValue == urgency] as [String: Any]
            },
            "webPushMessage": form["webPushMessage"]
                ?? #"{"web_push":8030,"notification":{"title":"Hello","body":"from the console"}}"#,
        ]
    }

    /// The endpoint of a PushSubscription's JSON, if it has one.
    static func webPushEndpoint(in subscription: String) -> String? {
        guard let value = try? JSONValue(parsing: Data(subscription.utf8)), case .string(let endpoint)? = value["endpoint"]
        else { return nil }
        return endpoint
    }

    /// Sends the web push form's message as an application server would: encrypted to the subscription's keys and
    /// signed with the chosen VAPID key, posted to the gateway's own web push service (the endpoint's path on it:
    /// the console sends nowhere else). The values the page shows.
    func sendWebPush(_ form: [String: String]) async -> [String: Any] {
        guard let sender, let service = await sender.webPushURL() else {
            return ["webPushMessageText": "This gateway serves no web push."]
        }
        func refuse(_ text: String) -> [String: Any] { ["webPushMessageText": text] }
        let subscriptionText = form["webPushSubscription"] ?? ""
        guard let subscription = try? JSONValue(parsing: Data(subscriptionText.utf8)),
            case .string(let endpointText)? = subscription["endpoint"],
            case .string(let p256dh)? = subscription["keys"]?["p256dh"], case .string(let auth)? = subscription["keys"]?["auth"]
        else {
            return refuse(
                #"The subscription is not a PushSubscription's JSON: {"endpoint": …, "keys": {"p256dh": …, "auth": …}} (herald webpush subscribe prints one)."#
            )
        }
        guard let endpoint = URLComponents(string: endpointText), WebPushEndpoint(path: endpoint.path) != nil else {
            return refuse("\(endpointText) is not an endpoint of this gateway's web push service (…/push/<id>).")
        }
        guard let publicKey = Data(base64URLEncoded: p256dh), let authSecret = Data(base64URLEncoded: auth) else {
            return refuse("The subscription's keys are not base64url.")
        }
        let keyName = form["webPushKey"] ?? ""
        guard let pem = await sender.webPushFile(keyName),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
        else {
            return refuse("No VAPID key \(keyName): put a P-256 private key (PEM) in the data directory's webpush folder.")
        }
        guard let ttl = Int(form["webPushTTL"] ?? ""), ttl >= 0 else { return refuse("TTL takes seconds (0 or more).") }
        guard let urgency = WebPushUrgency(rawValue: form["webPushUrgency"] ?? "normal") else {
            return refuse("Urgency is very-low, low, normal or high.")
        }
        let topic = (form["webPushTopic"] ?? "").trimmingCharacters(in: .whitespaces)
        var fields = form
        fields["kind"] = "webpush"
        // The service's origin, for the JWT's `aud` and the POST's URL.
        let origin = service.textWithoutTrailingSlashes
        let body: Data
        let authorization: String
        do {
            body = try WebPushCipher.encrypt(
                Data((form["webPushMessage"] ?? "").utf8),
                for: WebPushCipher.SubscriptionKeys(p256dh: publicKey, auth: authSecret))
            authorization = try VAPIDAuthorization.header(
                origin: origin, subject: form["webPushSubject"].flatMap { $0.isEmpty ? nil : $0 },
                expiresAt: clock.now.addingTimeInterval(12 * 3_600), privateKey: key)
        } catch {
            return refuse("Cannot encrypt to this subscription: \(error).")
        }
        var headers = [
            ("authorization", authorization), ("ttl", String(ttl)), ("urgency", urgency.rawValue),
            ("content-encoding", "aes128gcm"),
        ]
        if !topic.isEmpty { headers.append(("topic", topic)) }
        let url = origin + endpoint.path
        let outcome: Result<(status: Int, headers: HTTPHeaders, body: JSONValue), any Error>
        do {
            outcome = .success(
                try await Self.postWebPush(
                    url, headers: headers, body: body, trusting: sender.certificateAuthorityFile))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .failure(let error):
            await remember(fields, status: 0, reason: "\(error)")
            return refuse("Not sent: \(error)")
        case .success(let answer):
            var result: [String: Any] = ["status": "\(answer.status)", "kind": answer.status == 201 ? "delivered" : "discarded"]
            var messageID: String?
            if let location = answer.headers.first(name: "location"), location.hasPrefix("/m/") {
                messageID = String(location.dropFirst(3))
                result["messageID"] = messageID
            }
            var reason: String?
            if case .string(let text)? = answer.body["reason"] {
                reason = text
                result["reason"] = text
            }
            await remember(fields, status: answer.status, reason: reason, uniqueID: messageID)
            logger.info("Console sent a web push", metadata: ["webpush.status": "\(answer.status)"])
            return ["webPushResult": result]
        }
    }

    /// One POST to the web push service, trusting the gateway's CA: its status, headers and JSON body (`null` for
    /// none).
    private static func postWebPush(
        _ url: String, headers: [(String, String)], body: Data, trusting caFile: String?
    ) async throws -> (status: Int, headers: HTTPHeaders, body: JSONValue) {
        var configuration = HTTPClient.Configuration()
        if let caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            // Read on the thread pool: a file read must not hold one of the cooperative pool's threads.
            tls.trustRoots = .certificates(
                try await NIOThreadPool.singleton.runIfActive { try NIOSSLCertificate.fromPEMFile(caFile) })
            configuration.tlsConfiguration = tls
        }
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(60))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await client.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return (
                Int(response.status.code), response.headers,
                (try? JSONValue(parsing: Data(bytes.readableBytesView))) ?? .null
            )
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
