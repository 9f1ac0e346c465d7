import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceProtocol
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import Logging
import NIOHTTP1
import ServiceLifecycle
import Testing
import UserNotifications

@testable import HeraldDevice

/// The device's Live Activities (issue 28, A13, B-14) between a real gateway and the daemon's registry: tokens issued
/// per activity, `liveactivity` pushes applied in timestamp order, broadcasts to every subscribed device, push-to-start,
/// stale and dismissal dates on the device's clock, and what survives a restart.
@Suite(.heavy, .timeLimit(.minutes(3))) struct LiveActivityRegistryTests {
    static let bundle = GatewayHarness.bundleID
    static let topic = bundle + ".push-type.liveactivity"

    /// Runs a daemon whose Live Activities are kept at `database` (in memory when `nil`).
    func withDaemon(
        _ harness: GatewayHarness, device: NotificationTestEnvironment, database: URL? = nil,
        deviceID: String = "phone-\(UUID().uuidString.prefix(6))", _ body: (DeviceDaemon) async throws -> Void
    ) async throws {
        var logger = Logger(label: "test.daemon")
        logger.logLevel = .warning
        let daemon = DeviceDaemon(
            configuration: DeviceDaemonConfiguration(
                gatewayURL: "wss://localhost:\(harness.ports.device)/device/v1",
                identity: DeviceIdentity(deviceID: deviceID, secret: "s3cret"),
                tlsConfiguration: try harness.clientTLS(), registrationTimeout: GatewayHarness.registrationTimeout,
                backoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))),
            engine: device.engine, liveActivitiesDatabase: database, logger: logger)
        try await withRunning([daemon], logger: logger) {
            try await eventually("connected", timeout: .seconds(30)) { daemon.isConnected }
            try await body(daemon)
        }
    }

    /// A new activity's record, as an app's `Activity.request` sends it.
    static func requested(
        _ pushType: LiveActivityRecord.PushType?, score: Int = 0, type: String = "ScoreAttributes"
    ) -> LiveActivityRecord {
        LiveActivityRecord(
            id: UUID().uuidString, bundleIdentifier: bundle, attributesType: type, attributes: #"{"home":"Lions"}"#,
            content: LiveActivityContentRecord(state: #"{"score":\#(score)}"#, staleDate: nil, relevanceScore: 0),
            pushType: pushType, startedAt: Date())
    }

    /// Sends a `liveactivity` push with `aps` to `token` (one provider token per connection, A-04).
    static func push(
        _ harness: GatewayHarness, _ client: HTTPClient, jwt: String, to token: String, aps: String
    ) async throws -> PushAnswer {
        try await client.push(
            port: harness.tlsPort, token: token,
            headers: [
                ("apns-topic", topic), ("apns-push-type", "liveactivity"), ("apns-priority", "10"),
                ("authorization", "bearer \(jwt)"),
            ],
            body: #"{"aps":\#(aps)}"#)
    }

    /// Makes a broadcast channel for the test app that stores no message, and returns its ID.
    static func makeChannel(_ harness: GatewayHarness) async throws -> String {
        let channel = BroadcastChannelRecord.makeID()
        let made = try await harness.store.createChannel(
            BroadcastChannelRecord(
                id: channel, bundleID: bundle, environment: .development, storagePolicy: .noMessageStored,
                createdAt: harness.clock.now),
            limit: 10)
        #expect(made)
        return channel
    }

    /// Broadcasts a Live Activity push with `aps` on `channel`, as a provider does.
    static func broadcast(
        _ harness: GatewayHarness, _ client: HTTPClient, jwt: String, on channel: String, aps: String
    ) async throws -> PushAnswer {
        try await client.push(
            port: harness.tlsPort, token: "", path: "/4/broadcasts/apps/\(bundle)",
            headers: [
                ("apns-push-type", "LiveActivity"), ("apns-priority", "10"), ("apns-expiration", "0"),
                ("apns-channel-id", channel), ("authorization", "bearer \(jwt)"),
            ],
            body: #"{"aps":\#(aps)}"#)
    }

    static func activity(_ daemon: DeviceDaemon, _ id: String) async throws -> LiveActivityRecord? {
        try await daemon.liveActivities.activities(of: bundle).first { $0.id == id }
    }

    @Test(
        "A13: .token: the activity gets a token of its own; updates apply in timestamp order (an older one is ignored), alerts are shown, the end dismisses at its dismissal-date and revokes the token (410)"
    )
    func tokenActivity() async throws {
        try await withGateway { harness, client in
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            let jwt = try harness.jwt()
            try await withDaemon(harness, device: device) { daemon in
                let appToken = try await daemon.register(bundleIdentifier: Self.bundle)
                let started = try await daemon.liveActivities.start(Self.requested(.token))
                let token = try #require(started.pushToken)
                #expect(token != appToken, "an activity's token is its own")
                #expect(try await harness.store.token(token)?.purpose == .liveActivity(activityID: started.id))

                let update = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: """
                        {"timestamp":1800000010,"event":"update","content-state":{"score":2},"relevance-score":75,
                         "alert":{"title":"Goal!","body":{"loc-key":"%@ scored","loc-args":["Ana"]},"sound":"chime.aiff"}}
                        """)
                #expect(update.status == 200)
                try await eventually("the update", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.content.state == #"{"score":2}"#
                }
                let updated = try #require(try await Self.activity(daemon, started.id))
                #expect(updated.content.relevanceScore == 75)
                #expect(updated.alert == LiveActivityAlertRecord(title: "Goal!", body: "Ana scored", sound: "chime.aiff"))
                let shown = try #require(device.presenter.liveActivities.last)
                #expect(shown.activityID == started.id && shown.state == "active" && shown.alertTitle == "Goal!")
                #expect(
                    TerminalPresenter.line(for: shown).contains(
                        "active: score: 2  [alert: Goal! — Ana scored, sound: chime.aiff]"))

                // Older than the last applied: ignored (fenced by a later push on the same connection).
                let older = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: #"{"timestamp":1800000005,"event":"update","content-state":{"score":1}}"#)
                // Issue 69: a push that changes nothing says why in the delivery log, not "Delivered to Device".
                let unreadable = try await Self.push(
                    harness, client, jwt: jwt, to: token, aps: #"{"event":"update","content-state":{"score":9}}"#)
                for (answer, state) in [
                    (older, "Discarded - Out of Order: "), (unreadable, "Discarded - Not an Activity Update: "),
                ] {
                    let uniqueID = try #require(answer.headers.first(name: "apns-unique-id"))
                    try await eventually(state, timeout: .seconds(30)) {
                        await harness.gateway.flushDeliveryLog()
                        return try await harness.store.events(uniqueID: uniqueID).last?.detail.hasPrefix(state) == true
                    }
                }
                _ = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: #"{"timestamp":1800000010,"event":"update","content-state":{"score":3}}"#)
                try await eventually("the fence", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.content.state == #"{"score":3}"#
                }
                #expect(!device.presenter.liveActivities.contains { $0.contentState == #"{"score":1}"# })

                // An end with a dismissal date already past: dismissed at once; its token is revoked.
                let past = Int(device.clock.now.timeIntervalSince1970) - 1
                let end = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: """
                        {"timestamp":1800000020,"event":"end","content-state":{"score":4},"dismissal-date":\(past)}
                        """)
                #expect(end.status == 200)
                try await eventually("dismissed", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.state == .dismissed
                }
                #expect(try await Self.activity(daemon, started.id)?.content.state == #"{"score":4}"#)
                try await eventually("the token revoked", timeout: .seconds(30)) {
                    try await harness.store.token(token)?.revokedAt != nil
                }
                let after = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: #"{"timestamp":1800000030,"event":"update","content-state":{"score":5}}"#)
                #expect(after.status == 410)
                #expect(after.reason == "Unregistered")
            }
        }
    }

    @Test(
        "Stale and dismissal dates are kept on the device's clock: stale at the content's stale date, active again on an update, an end by the app dismissed four hours later"
    )
    func staleAndDismissal() async throws {
        try await withGateway { harness, _ in
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            try await withDaemon(harness, device: device) { daemon in
                let registry = daemon.liveActivities
                let started = try await registry.start(Self.requested(nil))
                let staleDate = device.clock.now.addingTimeInterval(60)
                _ = try await registry.update(
                    started.id, of: Self.bundle,
                    content: LiveActivityContentRecord(state: #"{"score":1}"#, staleDate: staleDate, relevanceScore: 0),
                    alert: nil, end: nil)
                #expect(await device.clock.waitForSleeper(until: staleDate))
                device.clock.advance(by: 61)
                try await eventually("stale", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.state == .stale
                }
                let fresh = try await registry.update(
                    started.id, of: Self.bundle,
                    content: LiveActivityContentRecord(state: #"{"score":2}"#, staleDate: nil, relevanceScore: 0), alert: nil,
                    end: nil)
                #expect(fresh.state == .active)
                let ended = try await registry.update(started.id, of: Self.bundle, content: nil, alert: nil, end: .automatic)
                #expect(ended.state == .ended)
                let dismissal = try #require(ended.dismissalDate)
                #expect(dismissal == device.clock.now.addingTimeInterval(LiveActivityRegistry.defaultDismissalDelay))
                await #expect(throws: LiveActivityRegistry.Failure.ended(started.id)) {
                    _ = try await registry.update(started.id, of: Self.bundle, content: nil, alert: nil, end: nil)
                }
                #expect(await device.clock.waitForSleeper(until: dismissal))
                device.clock.advance(to: dismissal)
                try await eventually("dismissed", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.state == .dismissed
                }
                #expect(
                    device.presenter.liveActivities.map(\.state) == ["active", "active", "stale", "active", "ended", "dismissed"])
                await #expect(throws: LiveActivityRegistry.Failure.unknownActivity("nope")) {
                    _ = try await registry.update("nope", of: Self.bundle, content: nil, alert: nil, end: nil)
                }
            }
        }
    }

    @Test(
        "Apple's eight hours: a running activity ends eight hours after it started (its token revoked) and is dismissed four hours later"
    )
    func eightHourLimit() async throws {
        try await withGateway { harness, _ in
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            try await withDaemon(harness, device: device) { daemon in
                let started = try await daemon.liveActivities.start(Self.requested(.token))
                let token = try #require(started.pushToken)
                let end = started.startedAt.addingTimeInterval(LiveActivityRegistry.maximumDuration)
                #expect(await device.clock.waitForSleeper(until: end))
                device.clock.advance(to: end)
                try await eventually("ended", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.state == .ended
                }
                let ended = try #require(try await Self.activity(daemon, started.id))
                #expect(ended.dismissalDate == end.addingTimeInterval(LiveActivityRegistry.defaultDismissalDelay))
                try await eventually("the token revoked", timeout: .seconds(30)) {
                    try await harness.store.token(token)?.revokedAt != nil
                }
                let dismissal = try #require(ended.dismissalDate)
                #expect(await device.clock.waitForSleeper(until: dismissal))
                device.clock.advance(to: dismissal)
                try await eventually("dismissed", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.state == .dismissed
                }
            }
        }
    }

    /// An app's content state holding issue 69's values, as `Activity` decodes it with `JSONDecoder`.
    struct ValuesState: Decodable {
        var p53: Int64
        var i64max: Int64
        var i64min: Int64
        var u64max: UInt64
        var u64over: Double
        var e308: Double
        var tenth: Double
        var yes: Bool
        var no: Bool
        var nothing: Int?
        var e30: Double
    }

    @Test("Issue 69: a broadcast's content-state reaches the activity with its values: null kept, integers exact to UInt64.max")
    func broadcastValues() async throws {
        try await withGateway { harness, client in
            let channel = try await Self.makeChannel(harness)
            let jwt = try harness.jwt()
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            try await withDaemon(harness, device: device) { daemon in
                let activity = try await daemon.liveActivities.start(Self.requested(.channel(channel)))
                let answer = try await Self.broadcast(
                    harness, client, jwt: jwt, on: channel,
                    aps: #"{"timestamp":1800000001,"event":"update","content-state":{\#(PayloadValues.members)}}"#)
                #expect(answer.status == 200)
                var state = ""
                try await eventually("the update", timeout: .seconds(30)) {
                    state = try await Self.activity(daemon, activity.id)?.content.state ?? ""
                    return state.contains("p53")
                }
                let object = try #require(try JSONSerialization.jsonObject(with: Data(state.utf8)) as? [AnyHashable: Any])
                #expect(PayloadValues.mismatches(in: object) == [], "\(state)")
                let decoded = try JSONDecoder().decode(ValuesState.self, from: Data(state.utf8))
                #expect(decoded.u64max == .max && decoded.i64min == .min && decoded.p53 == 9_007_199_254_740_993)
                #expect(decoded.yes && !decoded.no && decoded.nothing == nil && decoded.e30 == 1e30)
            }
        }
    }

    @Test(
        "B-14: two devices with activities on one channel both get a broadcast; an unknown channel fails the start; an ended activity leaves the channel"
    )
    func channelActivities() async throws {
        try await withGateway { harness, client in
            let channel = try await Self.makeChannel(harness)
            let jwt = try harness.jwt()
            /// A Live Activity update on the channel, as a provider broadcasts it.
            func broadcast(score: Int, at timestamp: Int) async throws -> PushAnswer {
                try await Self.broadcast(
                    harness, client, jwt: jwt, on: channel,
                    aps: #"{"timestamp":\#(timestamp),"event":"update","content-state":{"score":\#(score)}}"#)
            }
            let first = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            let second = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            try await withDaemon(harness, device: first) { one in
                try await withDaemon(harness, device: second) { two in
                    await #expect(throws: LiveActivityRegistry.Failure.unknownChannel("bm90LWEtY2hhbm5lbA==")) {
                        _ = try await one.liveActivities.start(Self.requested(.channel("bm90LWEtY2hhbm5lbA==")))
                    }
                    let a = try await one.liveActivities.start(Self.requested(.channel(channel)))
                    let b = try await two.liveActivities.start(Self.requested(.channel(channel)))
                    #expect(a.pushToken == nil && a.channelID == channel)
                    let answer = try await broadcast(score: 7, at: 1800000001)
                    #expect(answer.status == 200)
                    try await eventually("both devices", timeout: .seconds(30)) {
                        let onFirst = try await Self.activity(one, a.id)?.content.state
                        let onSecond = try await Self.activity(two, b.id)?.content.state
                        return onFirst == #"{"score":7}"# && onSecond == #"{"score":7}"#
                    }
                    // The first device's activity ends: it leaves the channel; the second still gets broadcasts.
                    _ = try await one.liveActivities.update(a.id, of: Self.bundle, content: nil, alert: nil, end: .immediate)
                    let later = try await broadcast(score: 8, at: 1800000002)
                    #expect(later.status == 200)
                    try await eventually("the second device", timeout: .seconds(30)) {
                        try await Self.activity(two, b.id)?.content.state == #"{"score":8}"#
                    }
                    #expect(try await Self.activity(one, a.id)?.content.state == #"{"score":7}"#)
                    #expect(try await Self.activity(one, a.id)?.state == .dismissed)
                }
            }
        }
    }

    @Test(
        "Push-to-start: a start to the type's token makes a new activity with input-push-token's own token; a start whose attributes-type is another's, or an update to that token, is dropped; activities survive the daemon's restart"
    )
    func pushToStart() async throws {
        try await withGateway { harness, client in
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            let database = try ScratchFolder.make().appendingPathComponent("live-activities.sqlite")
            let jwt = try harness.jwt()
            let deviceID = "phone-\(UUID().uuidString.prefix(6))"
            var startedID = ""
            try await withDaemon(harness, device: device, database: database, deviceID: deviceID) { daemon in
                let token = try await daemon.liveActivities.pushToStartToken(for: Self.bundle, attributesType: "ScoreAttributes")
                #expect(
                    try await daemon.liveActivities.pushToStartToken(for: Self.bundle, attributesType: "ScoreAttributes") == token
                )
                let wrongType = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: """
                        {"timestamp":1800000000,"event":"start","attributes-type":"OtherAttributes","attributes":{"home":"X"},
                         "content-state":{"score":0},"alert":{"title":"Kick-off","body":"Lions v Tigers"}}
                        """)
                #expect(wrongType.status == 200)
                let start = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: """
                        {"timestamp":1800000001,"event":"start","attributes-type":"ScoreAttributes","attributes":{"home":"Lions"},
                         "content-state":{"score":0},"alert":{"title":"Kick-off","body":"Lions v Tigers"},"input-push-token":1}
                        """)
                #expect(start.status == 200)
                try await eventually("the started activity's token", timeout: .seconds(30)) {
                    try await daemon.liveActivities.activities(of: Self.bundle).first?.pushToken != nil
                }
                let activities = try await daemon.liveActivities.activities(of: Self.bundle)
                #expect(activities.count == 1)
                let started = try #require(activities.first)
                startedID = started.id
                #expect(
                    started.startedByPush && started.attributesType == "ScoreAttributes"
                        && started.attributes == #"{"home":"Lions"}"#)
                #expect(started.pushType == .token)
                #expect(device.presenter.liveActivities.first?.alertTitle == "Kick-off")
                let update = try await Self.push(
                    harness, client, jwt: jwt, to: try #require(started.pushToken),
                    aps: #"{"timestamp":1800000002,"event":"update","content-state":{"score":1}}"#)
                #expect(update.status == 200)
                try await eventually("the update", timeout: .seconds(30)) {
                    try await Self.activity(daemon, started.id)?.content.state == #"{"score":1}"#
                }
            }
            // A new registry on the same file: the activity and the push-to-start token are still there.
            try await withDaemon(harness, device: device, database: database, deviceID: deviceID) { daemon in
                let kept = try #require(try await Self.activity(daemon, startedID))
                #expect(kept.content.state == #"{"score":1}"# && kept.state == .active)
                #expect(try await LiveActivityRegistry.activities(in: database).map(\.id) == [startedID])
            }
        }
    }

    @Test(
        "Push-to-start with input-push-channel (iOS 18): the new activity is on that channel, and a broadcast on it updates the activity"
    )
    func pushToStartOnChannel() async throws {
        try await withGateway { harness, client in
            let channel = try await Self.makeChannel(harness)
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            let jwt = try harness.jwt()
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.liveActivities.pushToStartToken(for: Self.bundle, attributesType: "ScoreAttributes")
                let start = try await Self.push(
                    harness, client, jwt: jwt, to: token,
                    aps: """
                        {"timestamp":1800000001,"event":"start","attributes-type":"ScoreAttributes","attributes":{"home":"Owls"},
                         "content-state":{"score":0},"alert":{"title":"Kick-off","body":"Owls v Foxes"},
                         "input-push-channel":"\(channel)"}
                        """)
                #expect(start.status == 200)
                try await eventually("the started activity", timeout: .seconds(30)) {
                    try await !daemon.liveActivities.activities(of: Self.bundle).isEmpty
                }
                let started = try #require(try await daemon.liveActivities.activities(of: Self.bundle).first)
                #expect(started.channelID == channel && started.pushToken == nil && started.startedByPush)
                // The device subscribes once the activity is kept: a broadcast on the channel then reaches it (one
                // a second until it does, thirty at most; a broadcast before the subscription is not stored).
                var answer: PushAnswer?
                var applied = false
                for _ in 0..<30 where !applied {
                    answer = try await Self.broadcast(
                        harness, client, jwt: jwt, on: channel,
                        aps: #"{"timestamp":1800000002,"event":"update","content-state":{"score":3}}"#)
                    let deadline = ContinuousClock.now + .seconds(1)
                    while !applied, ContinuousClock.now < deadline {
                        applied = try await Self.activity(daemon, started.id)?.content.state == #"{"score":3}"#
                        if !applied { try await Task.sleep(for: .milliseconds(20)) }
                    }
                }
                #expect(applied, "a broadcast on the channel updated the activity")
                #expect(answer?.status == 200)
            }
        }
    }

    @Test(
        "A scheduled Live Activity (iOS 26, request(…start:)) is pending until its date on the device's clock, then active with its alert and its own token; one whose date has passed starts at once; ended while pending, it never shows"
    )
    func scheduledStart() async throws {
        try await withGateway { harness, _ in
            let device = try NotificationTestEnvironment(bundleIdentifier: Self.bundle)
            try await withDaemon(harness, device: device) { daemon in
                let start = device.clock.now.addingTimeInterval(600)
                var requested = Self.requested(.token)
                requested.scheduledStart = start
                requested.alert = LiveActivityAlertRecord(title: "Kick-off", body: "Owls v Foxes", sound: "default")
                let pending = try await daemon.liveActivities.start(requested)
                #expect(pending.state == .pending && pending.pushToken == nil)
                #expect(device.presenter.liveActivities.isEmpty, "not shown before it starts")

                var cancelled = Self.requested(.token)
                cancelled.scheduledStart = start
                _ = try await daemon.liveActivities.start(cancelled)
                let ended = try await daemon.liveActivities.update(
                    cancelled.id, of: Self.bundle, content: nil, alert: nil, end: .automatic)
                #expect(ended.state == .dismissed)

                device.clock.advance(to: start.addingTimeInterval(-1))
                try await Task.sleep(for: .milliseconds(200))
                #expect(try await Self.activity(daemon, pending.id)?.state == .pending)
                device.clock.advance(to: start)
                try await eventually("started at its date, with its token", timeout: .seconds(30)) {
                    let now = try await Self.activity(daemon, pending.id)
                    return now?.state == .active && now?.pushToken != nil
                }
                #expect(try await Self.activity(daemon, pending.id)?.startedAt == start)
                let shown = device.presenter.liveActivities.filter { $0.activityID == pending.id }
                #expect(shown.first?.alertTitle == "Kick-off" && shown.first?.state == "active")
                #expect(!device.presenter.liveActivities.contains { $0.activityID == cancelled.id })

                var late = Self.requested(.token)
                late.scheduledStart = device.clock.now.addingTimeInterval(-60)
                let startedAtOnce = try await daemon.liveActivities.start(late)
                #expect(startedAtOnce.state == .active)
            }
        }
    }
}
