import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldTesting
import HeraldWebPush
import Logging
import Synchronization
import Testing

@testable import HeraldDevice
@testable import HeraldNotificationEngine

/// The device as a web app's user agent: subscriptions kept per origin, messages decrypted and shown when declarative.
@Suite struct WebPushAgentTests {
    static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// What the gateway did for the agent: tokens issued and revoked, by purpose.
    final class FakeGateway: Sendable {
        let issued = Mutex<[(String, TokenPurpose)]>([])
        let revoked = Mutex<[(String, TokenPurpose)]>([])

        func issue(_ bundleID: String, _ purpose: TokenPurpose) -> String {
            issued.withLock { $0.append((bundleID, purpose)) }
            return DeviceToken.random().hex
        }
    }

    static func subscribe(
        _ agent: WebPushAgent, _ gateway: FakeGateway, origin: String, key: String? = nil
    ) async throws -> WebPushAgent.Subscription {
        try await agent.subscribe(
            origin: origin, applicationServerKey: key, serviceOrigin: "https://localhost:2199",
            issueToken: { gateway.issue($0, $1) },
            revokeToken: { bundleID, purpose in gateway.revoked.withLock { $0.append((bundleID, purpose)) } })
    }

    @Test("An origin is https (http only on loopback) with no path; its bundle ID is webapp.<host>[-port]")
    func origins() throws {
        #expect(try WebPushAgent.origin("https://News.Example.com/").origin == "https://news.example.com")
        #expect(try WebPushAgent.origin("http://localhost:8080").origin == "http://localhost:8080")
        for bad in ["http://news.example.com", "https://news.example.com/page", "news.example.com", "https://", "ftp://x.y"] {
            #expect(throws: WebPushAgent.Refusal.self, "\(bad)") { try WebPushAgent.origin(bad) }
        }
        #expect(
            WebPushAgent.bundleID(for: try WebPushAgent.origin("https://news.example.com").components)
                == "webapp.news.example.com")
        #expect(
            WebPushAgent.bundleID(for: try WebPushAgent.origin("https://news.example.com:443").components)
                == "webapp.news.example.com")
        #expect(
            WebPushAgent.bundleID(for: try WebPushAgent.origin("https://a.example:8443").components) == "webapp.a.example-8443")
        #expect(
            WebPushAgent.bundleID(for: try WebPushAgent.origin("http://localhost:8080").components)
                == "webapp.http.localhost-8080")
    }

    @Test(
        "Subscribing again with the same key gives the same subscription; another key a new one, the old token revoked; a key that is no P-256 point is refused"
    )
    func subscriptions() async throws {
        let agent = WebPushAgent(url: nil, presenter: RecordingPresenter(), clock: VirtualClock(), logger: Self.quiet)
        let gateway = FakeGateway()
        let key = WebPushCipher.UserAgentKeys().subscription.p256dh.base64URLEncodedString()  // any P-256 point
        let first = try await Self.subscribe(agent, gateway, origin: "https://news.example.com", key: key)
        #expect(try await Self.subscribe(agent, gateway, origin: "https://news.example.com", key: key) == first)
        #expect(gateway.issued.withLock { $0.count } == 1)
        #expect(gateway.issued.withLock { $0.first?.0 } == "webapp.news.example.com")
        let second = try await Self.subscribe(agent, gateway, origin: "https://news.example.com")
        #expect(second.endpoint != first.endpoint && second.keys != first.keys)
        #expect(gateway.revoked.withLock { $0.map(\.1) } == [.webPush(applicationServerKey: key)])
        await #expect(throws: WebPushAgent.Refusal.self) {
            _ = try await Self.subscribe(agent, gateway, origin: "https://news.example.com", key: "AAAA")
        }
    }

    @Test(
        "A message is decrypted with its subscription's keys: a Declarative Web Push message is shown as its web app's notification, others are not"
    )
    func messages() async throws {
        let presenter = RecordingPresenter()
        let agent = WebPushAgent(url: nil, presenter: presenter, clock: VirtualClock(), logger: Self.quiet)
        let gateway = FakeGateway()
        let subscription = try await Self.subscribe(agent, gateway, origin: "https://news.example.com")
        let path = try #require(URLComponents(string: subscription.endpoint)?.path)
        let token = try #require(WebPushEndpoint(path: path)?.token.hex)
        let keys = WebPushCipher.SubscriptionKeys(
            p256dh: try #require(Data(base64URLEncoded: subscription.keys.p256dh)),
            auth: try #require(Data(base64URLEncoded: subscription.keys.auth)))
        func push(_ text: String, to token: String = token) throws -> DevicePush {
            DevicePush(
                deliveryID: UUID().uuidString, token: token, topic: "webapp.news.example.com/x",
                bundleID: "webapp.news.example.com", pushType: "webpush", priority: 10, apnsID: "x", collapseID: nil,
                payload: try WebPushCipher.encrypt(Data(text.utf8), for: keys).base64URLEncodedString(), fromStorage: false)
        }
        let declarative =
            #"{"web_push":8030,"notification":{"title":"Goal","body":"2-1","navigate":"https://news.example.com/","app_badge":3}}"#
        let first = try push(declarative)
        let shown = try await agent.receive(first)
        guard case .shown(let origin, let message) = shown else {
            Issue.record("not shown: \(shown)")
            return
        }
        #expect(origin == "https://news.example.com" && message.title == "Goal")
        let presented = try #require(presenter.presentations.first)
        #expect(presented.bundleIdentifier == "https://news.example.com")
        #expect(presented.title == "Goal" && presented.body == "2-1" && presented.badge == 3 && presented.soundName == "default")
        #expect(try await agent.receive(try push("plain")) == .dropped("not declarative"))
        #expect(try await agent.receive(try push(declarative, to: DeviceToken.random().hex)) == .dropped("no subscription"))
        var tampered = try push(declarative)
        tampered.payload = try WebPushCipher.encrypt(Data(declarative.utf8), for: WebPushCipher.UserAgentKeys().subscription)
            .base64URLEncodedString()
        #expect(try await agent.receive(tampered) == .dropped("undecryptable"))
        // Delivered again (its acknowledgement lost): not shown twice.
        #expect(try await agent.receive(first) == .dropped("received before"))
        #expect(presenter.presentations.count == 1)

        // Each message recorded with what became of it (issue 64: the test-bed API's app-pushes), oldest first.
        let records = try await agent.messages()
        #expect(records.map(\.state) == [.shown, .dropped, .dropped, .dropped])
        #expect(records.map(\.reason) == [nil, .notDeclarative, .noSubscription, .undecryptable])
        #expect(records.first?.uniqueID == first.deliveryID && records.first?.origin == "https://news.example.com")
        #expect(records.first?.data == declarative && records[1].data == "plain" && records[3].data == nil)
        #expect(records[2].origin == nil && records.allSatisfy { $0.bundleIdentifier == "webapp.news.example.com" })
    }
}
