import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

@testable import HeraldGatewayStore

@Suite(.heavy, .timeLimit(.minutes(3))) struct GatewayStoreContractTests {
    static let day0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func notification(
        _ uniqueID: String, token: String = "aa", topic: String = "com.example.app", device: String = "device-1",
        at: Date = day0
    ) -> StoredNotification {
        StoredNotification(
            token: token, deviceID: device, topic: topic, bundleID: "com.example.app", apnsID: uniqueID,
            uniqueID: uniqueID, pushType: .alert, priority: .immediate, collapseID: "c", payload: Data(#"{"aps":{}}"#.utf8),
            receivedAt: at, expiresAt: at.addingTimeInterval(60))
    }

    @Test("Keys: saved, replaced by key ID, listed oldest first, found by ID", arguments: StoreBackEnd.allCases)
    func keys(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            let first = ProviderKeyRecord(
                keyID: "KEY1234567", teamID: "TEAM123456", publicKeyPEM: "pem-1", environment: .production,
                topics: ["com.example.a", "com.example.b"], createdAt: Self.day0)
            let second = ProviderKeyRecord(
                keyID: "KEY7654321", teamID: "TEAM123456", publicKeyPEM: "pem-2", createdAt: Self.day0 + 1)
            try await store.saveProviderKey(first)
            try await store.saveProviderKey(second)
            #expect(try await store.providerKey(id: "KEY1234567") == first)
            #expect(try await store.providerKey(id: "NOSUCHKEY0") == nil)
            var replaced = first
            replaced.publicKeyPEM = "pem-3"
            replaced.topics = []
            replaced.environment = nil
            try await store.saveProviderKey(replaced)
            #expect(try await store.providerKeys() == [replaced, second])
        }
    }

    @Test("Devices: unknown, enrolled without a secret, then the first secret sticks", arguments: StoreBackEnd.allCases)
    func enrollment(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            #expect(try await store.deviceEnrollment(deviceID: "d") == .unknown)
            _ = try await store.activeToken(deviceID: "d", bundleID: "com.example.app", environment: .development, at: Self.day0)
            #expect(try await store.deviceEnrollment(deviceID: "d") == .withoutSecret)
            try await store.enrollDevice(id: "d", secretHash: Data([1, 2, 3]), at: Self.day0)
            try await store.enrollDevice(id: "d", secretHash: Data([9]), at: Self.day0)
            #expect(try await store.deviceEnrollment(deviceID: "d") == .secret(hash: Data([1, 2, 3])))
        }
    }

    @Test(
        "D-08, D-11: one active token per device, app and environment; revoked is 410's timestamp and drops what was stored",
        arguments: StoreBackEnd.allCases)
    func tokens(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            let issued = try await store.activeToken(
                deviceID: "d", bundleID: "com.example.app", environment: .development, at: Self.day0)
            #expect(
                try await store.activeToken(
                    deviceID: "d", bundleID: "com.example.app", environment: .development, at: Self.day0 + 5) == issued)
            let production = try await store.activeToken(
                deviceID: "d", bundleID: "com.example.app", environment: .production, at: Self.day0)
            #expect(production.token != issued.token)
            #expect(try await store.token(issued.token.uppercased()) == issued)
            _ = try await store.store(Self.notification("u1", token: issued.token, device: "d"))
            let revokedAt = Self.day0 + 60
            let revoked = try #require(try await store.revokeToken(issued.token, at: revokedAt))
            #expect(revoked.revokedAt == revokedAt)
            #expect(try await store.token(issued.token)?.revokedAt == revokedAt)
            #expect(try await store.storedNotifications(deviceID: "d").isEmpty)
            // Revoking again keeps the first time; an unknown token is nil.
            #expect(try await store.revokeToken(issued.token, at: revokedAt + 60)?.revokedAt == revokedAt)
            #expect(try await store.revokeToken(String(repeating: "ab", count: 32), at: revokedAt) == nil)
            let next = try await store.activeToken(
                deviceID: "d", bundleID: "com.example.app", environment: .development, at: Self.day0 + 120)
            #expect(next.token != issued.token)
            #expect(
                try await store.tokens(includingRevoked: false).map(\.token).sorted() == [next.token, production.token].sorted())
            #expect(try await store.tokens(includingRevoked: true).count == 3)
        }
    }

    @Test(
        "Issue 71 (2): past a device's token quota no new token is issued (tokenQuota); a token it has is still answered, another device is not held back, and a revoked token frees a place",
        arguments: StoreBackEnd.allCases)
    func tokenQuota(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            func token(_ device: String, _ app: String) async throws -> DeviceTokenRecord {
                try await store.activeToken(
                    deviceID: device, bundleID: app, environment: .development, purpose: .app, at: Self.day0, limit: 3)
            }
            let first = try await token("d", "com.example.a")
            _ = try await token("d", "com.example.b")
            _ = try await token("d", "com.example.c")
            await #expect(throws: GatewayStoreError.tokenQuota(limit: 3)) { try await token("d", "com.example.d") }
            #expect(try await token("d", "com.example.a") == first)
            _ = try await token("other", "com.example.d")
            _ = try await store.revokeToken(first.token, at: Self.day0 + 1)
            #expect(try await token("d", "com.example.d").bundleID == "com.example.d")
            #expect(try await store.tokens(includingRevoked: false).filter { $0.deviceID == "d" }.count == 3)
        }
    }

    @Test(
        "A token per purpose: the app's, VoIP, each Live Activity and push-to-start are apart, each stable until revoked",
        arguments: StoreBackEnd.allCases)
    func tokenPurposes(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            let purposes: [TokenPurpose] = [
                .app, .voip, .liveActivity(activityID: "A1"), .liveActivity(activityID: "A2"),
                .pushToStart(attributesType: "ScoreAttributes"),
            ]
            var issued: [DeviceTokenRecord] = []
            for purpose in purposes {
                let record = try await store.activeToken(
                    deviceID: "d", bundleID: "com.example.app", environment: .development, purpose: purpose, at: Self.day0)
                #expect(record.purpose == purpose)
                let again = try await store.activeToken(
                    deviceID: "d", bundleID: "com.example.app", environment: .development, purpose: purpose, at: Self.day0 + 1)
                #expect(again == record)
                #expect(try await store.token(record.token) == record)
                issued.append(record)
            }
            #expect(Set(issued.map(\.token)).count == purposes.count)
            // The app's token is the one the call without a purpose gives.
            let app = try await store.activeToken(
                deviceID: "d", bundleID: "com.example.app", environment: .development, at: Self.day0)
            #expect(app == issued[0])
            // Revoking one purpose's token leaves the others.
            _ = try await store.revokeToken(issued[2].token, at: Self.day0 + 2)
            let listed = try await store.tokens(includingRevoked: false)
            #expect(Set(listed.map(\.purpose)) == Set(purposes).subtracting([purposes[2]]))
        }
    }

    @Test(
        "D-04: one notification kept per token and topic, oldest first; the replaced one's unique id is reported",
        arguments: StoreBackEnd.allCases)
    func storeAndForward(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            #expect(try await store.store(Self.notification("first")) == nil)
            #expect(
                try await store.store(Self.notification("other-topic", topic: "com.example.app.voip", at: Self.day0 + 1)) == nil)
            #expect(try await store.store(Self.notification("second", at: Self.day0 + 2)) == "first")
            let kept = try await store.storedNotifications(deviceID: "device-1")
            #expect(kept.map(\.uniqueID) == ["other-topic", "second"])
            #expect(kept.last == Self.notification("second", at: Self.day0 + 2))
            // Removing checks the unique id: a newer notification under the same key stays.
            try await store.removeStoredNotification(token: "aa", topic: "com.example.app", uniqueID: "first")
            #expect(try await store.storedNotifications(deviceID: "device-1").count == 2)
            try await store.removeStoredNotification(token: "aa", topic: "com.example.app", uniqueID: "second")
            #expect(try await store.storedNotifications(deviceID: "device-1").map(\.uniqueID) == ["other-topic"])
            _ = try await store.store(Self.notification("elsewhere", token: "bb", device: "device-2"))
            #expect(try await store.storedNotificationCounts() == ["device-1": 1, "device-2": 1])
        }
    }

    @Test(
        "Issue 63: a kept notification with loggedAt has its received and stored events written with it, and the one it replaced its discarded one; without loggedAt, none (the caller logs)",
        arguments: StoreBackEnd.allCases)
    func keptWithItsLog(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            let token = try await store.activeToken(
                deviceID: "device-1", bundleID: "com.example.app", environment: .development, at: Self.day0
            ).token
            func logged(_ uniqueID: String, at offset: Double) -> StoredNotification {
                var n = Self.notification(uniqueID, token: token, at: Self.day0 + offset)
                n.loggedAt = Self.day0 + offset + 0.5
                return n
            }
            let first = logged("first", at: 1)
            #expect(try await store.store(first) == nil)
            let stored = DeliveryEvent(uniqueID: "first", at: Self.day0 + 1.5, kind: .stored, detail: DeliveryEvent.storedDetail)
            #expect(try await store.events(uniqueID: "first") == [DeliveryEvent.received(first), stored])
            let second = logged("second", at: 2)
            #expect(try await store.store(second) == "first")
            let replaced = DeliveryEvent(
                uniqueID: "first", at: Self.day0 + 2.5, kind: .discarded, detail: DeliveryEvent.replacedDetail)
            #expect(try await store.events(uniqueID: "first") == [DeliveryEvent.received(first), stored, replaced])
            #expect(try await store.events(uniqueID: "second").map(\.kind) == [.received, .stored])
            _ = try await store.store(Self.notification("unlogged", token: token, topic: "com.example.app.voip"))
            #expect(try await store.events(uniqueID: "unlogged").isEmpty)
            // Several nodes keep it through the batch statement: the same events.
            if let shared = store as? any SharedGatewayStore {
                let third = logged("third", at: 3)
                #expect(try await shared.relayOrStore(third) == .stored(replacing: "second"))
                #expect(
                    try await store.events(uniqueID: "third")
                        == [
                            DeliveryEvent.received(third),
                            DeliveryEvent(
                                uniqueID: "third", at: Self.day0 + 3.5, kind: .stored, detail: DeliveryEvent.storedDetail),
                        ])
                #expect(try await store.events(uniqueID: "second").map(\.kind) == [.received, .stored, .discarded])
            }
        }
    }

    @Test(
        "Claims: a session takes what nobody holds, in order; released, or lapsed, it can be taken again",
        arguments: StoreBackEnd.allCases)
    func claims(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            for index in 0..<5 {
                _ = try await store.store(Self.notification("n\(index)", topic: "t\(index)", at: Self.day0 + Double(index)))
            }
            let first = try await store.claimStoredNotifications(
                deviceID: "device-1", claimant: "a", until: Self.day0 + 100, now: Self.day0, limit: 3)
            #expect(first.map(\.uniqueID) == ["n0", "n1", "n2"])
            let second = try await store.claimStoredNotifications(
                deviceID: "device-1", claimant: "b", until: Self.day0 + 100, now: Self.day0, limit: 10)
            if backEnd == .postgres {
                // Another session gets only what the first does not hold.
                #expect(second.map(\.uniqueID) == ["n3", "n4"])
                try await store.releaseStoredNotifications(deviceID: "device-1", claimant: "a")
                let again = try await store.claimStoredNotifications(
                    deviceID: "device-1", claimant: "c", until: Self.day0 + 100, now: Self.day0, limit: 10)
                #expect(again.map(\.uniqueID) == ["n0", "n1", "n2"])
                // After its claim lapses, what "b" held is free.
                let lapsed = try await store.claimStoredNotifications(
                    deviceID: "device-1", claimant: "d", until: Self.day0 + 300, now: Self.day0 + 200, limit: 10)
                #expect(lapsed.map(\.uniqueID) == ["n0", "n1", "n2", "n3", "n4"])
            } else {
                // One node, one session per device: a claim is a read.
                #expect(second.map(\.uniqueID) == ["n0", "n1", "n2", "n3", "n4"])
            }
        }
    }

    static func channel(
        _ id: String, _ bundleID: String = "com.example.app", _ environment: APNsEnvironment = .development,
        _ policy: BroadcastChannelRecord.StoragePolicy = .mostRecentMessageStored, at seconds: Double
    ) -> BroadcastChannelRecord {
        BroadcastChannelRecord(
            id: id, bundleID: bundleID, environment: environment, storagePolicy: policy,
            createdAt: day0.addingTimeInterval(seconds))
    }

    @Test(
        "B-02…B-05, B-07: channels per app and environment, listed oldest first, deleted once, at most the limit",
        arguments: StoreBackEnd.allCases)
    func channels(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            let first = Self.channel("AAAA", at: 1)
            // The limit (3 here) counts per app and environment.
            let creations: [(BroadcastChannelRecord, made: Bool)] = [
                (first, true),
                (Self.channel("BBBB", "com.example.app", .development, .noMessageStored, at: 2), true),
                (Self.channel("CCCC", at: 3), true),
                (Self.channel("DDDD", at: 4), false),
                (Self.channel("EEEE", "com.example.app", .production, at: 5), true),
                (Self.channel("FFFF", "com.example.other", at: 6), true),
            ]
            for (record, expected) in creations {
                let made = try await store.createChannel(record, limit: 3)
                #expect(made == expected, "\(record.id)")
            }
            #expect(
                try await store.channels(bundleID: "com.example.app", environment: .development).map(\.id) == [
                    "AAAA", "BBBB", "CCCC",
                ])
            #expect(try await store.channels(bundleID: "com.example.app", environment: .production).map(\.id) == ["EEEE"])
            #expect(try await store.channel(id: "AAAA", bundleID: "com.example.app", environment: .development) == first)
            #expect(
                try await store.channel(id: "BBBB", bundleID: "com.example.app", environment: .development)?.storagePolicy
                    == .noMessageStored)
            // Another app's or environment's channel is not this one's.
            #expect(try await store.channel(id: "AAAA", bundleID: "com.example.other", environment: .development) == nil)
            #expect(try await store.channel(id: "AAAA", bundleID: "com.example.app", environment: .production) == nil)

            for (bundleID, expected) in [("com.example.other", false), ("com.example.app", true), ("com.example.app", false)] {
                let deleted = try await store.deleteChannel(id: "AAAA", bundleID: bundleID, environment: .development)
                #expect(deleted == expected, "\(bundleID)")
            }
            #expect(
                try await store.channels(bundleID: "com.example.app", environment: .development).map(\.id) == ["BBBB", "CCCC"])
            let madeAgain = try await store.createChannel(Self.channel("DDDD", at: 7), limit: 3)
            #expect(madeAgain)
        }
    }

    @Test("B-07: a channel keeps its latest broadcast, replaced by the next", arguments: StoreBackEnd.allCases)
    func keptBroadcasts(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            func message(_ uniqueID: String, _ payload: String) -> ChannelMessage {
                ChannelMessage(
                    channelID: "AAAA", bundleID: "com.example.app", uniqueID: uniqueID, requestID: "r-" + uniqueID,
                    priority: 10, payload: Data(payload.utf8), receivedAt: GatewayStoreContractTests.day0,
                    expiresAt: GatewayStoreContractTests.day0.addingTimeInterval(3_600))
            }
            #expect(try await store.channelMessage(channelID: "AAAA") == nil)
            try await store.keepChannelMessage(message("u1", #"{"aps":{"timestamp":1}}"#))
            try await store.keepChannelMessage(message("u2", #"{"aps":{"timestamp":2}}"#))
            #expect(try await store.channelMessage(channelID: "AAAA") == message("u2", #"{"aps":{"timestamp":2}}"#))
            #expect(try await store.channelMessage(channelID: "BBBB") == nil)
        }
    }

    @Test("B-07: nodes making channels at once never pass the limit together")
    func channelLimitAcrossNodes() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 2) { stores in
            let made = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<24 {
                    group.addTask {
                        try await stores[index % 2].createChannel(
                            BroadcastChannelRecord(
                                id: "ch\(index)", bundleID: "com.example.app", environment: .development,
                                storagePolicy: .noMessageStored, createdAt: Date()),
                            limit: 5)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(made == 5)
            #expect(try await stores[1].channels(bundleID: "com.example.app", environment: .development).count == 5)
        }
    }

    @Test("C-04: the delivery log keeps each notification's events in order and prunes by age", arguments: StoreBackEnd.allCases)
    func deliveryLog(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            let kinds: [DeliveryEvent.Kind] = [.received, .stored, .delivered, .discarded]
            try await store.appendEvents(
                kinds.enumerated().map { index, kind in
                    DeliveryEvent(
                        uniqueID: index % 2 == 0 ? "a" : "b", at: Self.day0 + Double(index), kind: kind, detail: "\(index)")
                })
            try await store.appendEvents([
                DeliveryEvent(uniqueID: "a", at: Self.day0 + 86_400 * 8, kind: .delivered, detail: "late")
            ])
            #expect(try await store.events(uniqueID: "A").map(\.detail) == ["0", "2", "late"])
            #expect(try await store.events(uniqueID: "b").map(\.kind) == [.stored, .discarded])
            try await store.pruneEvents(before: Self.day0 + 86_400 * 7)
            #expect(try await store.events(uniqueID: "a").map(\.detail) == ["late"])
            #expect(try await store.events(uniqueID: "b").isEmpty)
        }
    }

    @Test(
        "The console's delivery log search: a notification found by apns-id (any case), device token or topic, newest first; its received event keeps what it was sent as",
        arguments: StoreBackEnd.allCases)
    func deliveryLogSearch(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            func received(
                _ uniqueID: String, _ apnsID: String, _ token: String, _ topic: String, at seconds: Double
            ) -> DeliveryEvent {
                DeliveryEvent(
                    uniqueID: uniqueID, at: Self.day0 + seconds, kind: .received, detail: "Received by APNs",
                    subject: DeliverySubject(apnsID: apnsID, recipient: token, topic: topic))
            }
            try await store.appendEvents([
                received("u1", "AAAA-1", "t1", "com.example.app", at: 0),
                DeliveryEvent(uniqueID: "u1", at: Self.day0 + 1, kind: .stored, detail: "Stored - Device Offline"),
                received("u2", "bbbb-2", "t1", "com.example.other", at: 2),
                received("u3", "cccc-3", "t2", "com.example.app", at: 3),
            ])
            #expect(try await store.loggedNotifications(matching: "aaaa-1", limit: 10).map(\.uniqueID) == ["u1"])
            #expect(
                try await store.loggedNotifications(matching: "AAAA-1", limit: 10).first?.subject
                    == DeliverySubject(apnsID: "aaaa-1", recipient: "t1", topic: "com.example.app"))
            #expect(try await store.loggedNotifications(matching: "t1", limit: 10).map(\.uniqueID) == ["u2", "u1"])
            #expect(try await store.loggedNotifications(matching: "com.example.app", limit: 10).map(\.uniqueID) == ["u3", "u1"])
            #expect(try await store.loggedNotifications(matching: "com.example.app", limit: 1).map(\.uniqueID) == ["u3"])
            #expect(try await store.loggedNotifications(matching: "Stored - Device Offline", limit: 10).isEmpty)
            #expect(
                try await store.events(uniqueID: "u1").map(\.subject) == [
                    DeliverySubject(apnsID: "aaaa-1", recipient: "t1", topic: "com.example.app"), nil,
                ])
        }
    }

    @Test(
        "Issue 64: deliveries — what each push was sent as, its timeline and latest state; filtered by token, topic, door, push type, collapse ID, state and since; removed by the same filters; every change wakes a waiter",
        arguments: StoreBackEnd.allCases)
    func deliveries(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            func received(
                _ uniqueID: String, token: String, topic: String = "com.example.app", door: DeliverySentAs.Door = .apns,
                pushType: String = "alert", collapseID: String? = nil, at seconds: Double
            ) -> DeliveryEvent {
                DeliveryEvent(
                    uniqueID: uniqueID, at: Self.day0 + seconds, kind: .received, detail: DeliveryEvent.receivedDetail,
                    subject: DeliverySubject(
                        apnsID: "id-\(uniqueID)", recipient: token, topic: topic,
                        sentAs: DeliverySentAs(
                            door: door, pushType: pushType, priority: door == .webpush ? 5 : 10, collapseID: collapseID,
                            expiration: door == .fcm ? 0 : nil,
                            payload: door == .webpush ? nil : #"{"aps":{"alert":"\#(uniqueID)"},"n":18446744073709551615}"#,
                            fcmMessage: door == .fcm ? "projects/p/messages/id-\(uniqueID)" : nil)))
            }
            // A push logged before doors were kept: no sentAs, read as the provider API's.
            let changes = store.deliveryLogChanges
            let before = changes.generation
            try await store.appendEvents([
                DeliveryEvent(
                    uniqueID: "u0", at: Self.day0, kind: .received, detail: DeliveryEvent.receivedDetail,
                    subject: DeliverySubject(apnsID: "id-u0", recipient: "t0", topic: "com.example.app")),
                received("u1", token: "t1", collapseID: "score", at: 1),
                DeliveryEvent(uniqueID: "u1", at: Self.day0 + 2, kind: .delivered, detail: "Delivered to Device"),
                received("u2", token: "t1", door: .fcm, pushType: "background", at: 3),
                DeliveryEvent(uniqueID: "u2", at: Self.day0 + 4, kind: .stored, detail: DeliveryEvent.storedDetail),
                received("u3", token: "t2", topic: "com.example.app/web", door: .webpush, pushType: "webpush", at: 5),
                DeliveryEvent(
                    uniqueID: "u3", at: Self.day0 + 6, kind: .discarded, detail: "Discarded - Nothing to Show: no alert"),
            ])
            #expect(changes.generation != before, "an append wakes waiters")
            let all = try await store.deliveries(DeliveryFilter(), limit: 100)
            #expect(all.map(\.uniqueID) == ["u0", "u1", "u2", "u3"])
            #expect(
                all.map(\.state) == [
                    "Received by APNs", "Delivered to Device", "Stored - Device Offline", "Discarded - Nothing to Show",
                ])
            #expect(all.map(\.sequence) == all.map(\.sequence).sorted() && Set(all.map(\.sequence)).count == 4)
            #expect(all[0].subject.sentAs == nil)
            let fcm = try #require(all[2].subject.sentAs)
            #expect(fcm.door == .fcm && fcm.pushType == "background" && fcm.priority == 10 && fcm.expiration == 0)
            #expect(fcm.payload == #"{"aps":{"alert":"u2"},"n":18446744073709551615}"#)
            #expect(fcm.fcmMessage == "projects/p/messages/id-u2")
            #expect(all[3].subject.sentAs?.payload == nil && all[3].subject.sentAs?.priority == 5)
            #expect(all[1].events.map(\.kind) == [.received, .delivered] && all[1].subject.sentAs?.collapseID == "score")

            func ids(_ change: (inout DeliveryFilter) -> Void, limit: Int = 100) async throws -> [String] {
                var filter = DeliveryFilter()
                change(&filter)
                return try await store.deliveries(filter, limit: limit).map(\.uniqueID)
            }
            #expect(try await ids { $0.token = "t1" } == ["u1", "u2"])
            #expect(try await ids { $0.topic = "com.example.app/web" } == ["u3"])
            #expect(try await ids { $0.door = .apns } == ["u0", "u1"], "a push logged without a door came by APNs")
            #expect(try await ids { $0.door = .fcm } == ["u2"])
            #expect(try await ids { $0.pushType = "webpush" } == ["u3"])
            #expect(try await ids { $0.collapseID = "score" } == ["u1"])
            #expect(try await ids { $0.state = "Stored - Device Offline" } == ["u2"])
            #expect(try await ids { $0.state = "Delivered to Device" } == ["u1"])
            #expect(try await ids({ $0.state = "Received by APNs" }, limit: 1) == ["u0"])
            #expect(try await ids { $0.since = Self.day0 + 3 } == ["u2", "u3"])
            #expect(try await ids { $0.afterSequence = all[1].sequence } == ["u2", "u3"])
            #expect(try await ids { $0.uniqueID = "U2" } == ["u2"])
            #expect(try await ids({ _ in }, limit: 2) == ["u0", "u1"])

            let beforeDelete = changes.generation
            var stored = DeliveryFilter()
            stored.state = "Stored - Device Offline"
            #expect(try await store.deleteDeliveries(stored) == 1)
            #expect(changes.generation != beforeDelete, "a removal wakes waiters")
            #expect(try await store.events(uniqueID: "u2").isEmpty, "its whole timeline went")
            var t1 = DeliveryFilter()
            t1.token = "t1"
            #expect(try await store.deleteDeliveries(t1) == 1)
            #expect(try await store.deleteDeliveries(t1) == 0)
            #expect(try await ids { _ in } == ["u0", "u3"])
            #expect(try await store.deleteDeliveries(DeliveryFilter()) == 2)
            #expect(try await ids { _ in } == [])
        }
    }

    @Test(
        "Issue 64: the log's events after a sequence, in order, each with what its notification was sent as; a sequence is never given again, also once everything was removed or pruned",
        arguments: StoreBackEnd.allCases)
    func loggedEvents(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            #expect(try await store.latestEventSequence() == 0)
            let subject = DeliverySubject(
                apnsID: "id-a", recipient: "t1", topic: "com.example.app",
                sentAs: DeliverySentAs(
                    door: .apns, pushType: "alert", priority: 10, collapseID: nil, expiration: nil, payload: #"{"aps":{}}"#,
                    fcmMessage: nil))
            func received(_ uniqueID: String, at seconds: Double) -> DeliveryEvent {
                DeliveryEvent(
                    uniqueID: uniqueID, at: Self.day0 + seconds, kind: .received, detail: DeliveryEvent.receivedDetail,
                    subject: subject)
            }
            try await store.appendEvents([
                received("a", at: 0),
                DeliveryEvent(uniqueID: "a", at: Self.day0 + 1, kind: .delivered, detail: "Delivered to Device"),
            ])
            let all = try await store.loggedEvents(after: 0, limit: 10)
            #expect(all.map(\.event.kind) == [.received, .delivered])
            #expect(all.map(\.subject) == [subject, subject], "a later event carries its notification's subject")
            let latest = try await store.latestEventSequence()
            #expect(all.count == 2 && all[0].sequence < all[1].sequence && latest == all[1].sequence, "\(all) \(latest)")
            #expect(try await store.loggedEvents(after: all[0].sequence, limit: 10).map(\.sequence) == [latest])
            #expect(try await store.loggedEvents(after: 0, limit: 1).map(\.sequence) == [all[0].sequence])

            // Everything removed: the next event still comes after the last one a stream sent.
            #expect(try await store.deleteDeliveries(DeliveryFilter()) == 1)
            #expect(try await store.loggedEvents(after: 0, limit: 10).isEmpty)
            #expect(try await store.latestEventSequence() == latest)
            try await store.appendEvents([received("b", at: 2)])
            #expect(try await store.loggedEvents(after: latest, limit: 10).map(\.event.uniqueID) == ["b"])
            // Everything pruned: the same.
            let beforePrune = try await store.latestEventSequence()
            try await store.pruneEvents(before: Self.day0 + 3_600)
            #expect(try await store.loggedEvents(after: 0, limit: 10).isEmpty)
            try await store.appendEvents([received("c", at: 4)])
            #expect(try await store.loggedEvents(after: beforePrune, limit: 10).map(\.event.uniqueID) == ["c"])
            // What keeps a sequence is no event: the metrics count "c" alone.
            let counts = try await store.eventCounts(since: Self.day0, bucket: 86_400 * 3_650)
            #expect(counts.map { "\($0.kind.rawValue) \($0.count)" } == ["received 1"], "\(counts)")
        }
    }

    @Test(
        "Issue 64: a wait on the delivery log returns at a change, at its timeout, or when cancelled, and leaves nothing behind")
    func deliveryLogChanges() async throws {
        let changes = ChangeSignal()
        let seen = changes.generation
        // A change after the wait began wakes it (no timeout reached: 60 s).
        async let woken: Void = changes.wait(after: seen, timeout: .seconds(60))
        try await eventually("the wait is open") { changes.waiting == 1 }
        changes.changed()
        await woken
        #expect(changes.waiting == 0)
        // A change before the wait: it returns at once.
        await changes.wait(after: seen, timeout: .seconds(60))
        // No change: the timeout (an injected clock cannot drive Task.sleep here; 10 ms is its whole cost).
        await changes.wait(after: changes.generation, timeout: .milliseconds(10))
        // Cancelled: it returns, and its place is given back.
        let task = Task { await changes.wait(after: changes.generation, timeout: .seconds(60)) }
        try await eventually("the wait is open") { changes.waiting == 1 }
        task.cancel()
        await task.value
        #expect(changes.waiting == 0)
        // A task cancelled before its wait begins returns at once.
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await changes.wait(after: changes.generation, timeout: .seconds(60))
        }
        await cancelledFirst.value
        #expect(changes.waiting == 0)
        // A wait on two signals: either wakes it, and it is left in neither.
        let other = ChangeSignal()
        async let either: Void = ChangeSignal.wait(
            any: [(changes, changes.generation), (other, other.generation)], timeout: .seconds(60))
        try await eventually("the wait is open on both") { changes.waiting == 1 && other.waiting == 1 }
        other.changed()
        await either
        #expect(changes.waiting == 0 && other.waiting == 0)
    }

    @Test(
        "The console's metrics: delivery-log events since a time, counted by kind and detail per bucket",
        arguments: StoreBackEnd.allCases)
    func eventCounts(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store in
            try await store.appendEvents([
                DeliveryEvent(uniqueID: "old", at: Self.day0 - 3_600, kind: .received, detail: "Received by APNs"),
                DeliveryEvent(uniqueID: "a", at: Self.day0 + 10, kind: .received, detail: "Received by APNs"),
                DeliveryEvent(uniqueID: "b", at: Self.day0 + 20, kind: .received, detail: "Received by APNs"),
                DeliveryEvent(uniqueID: "a", at: Self.day0 + 30, kind: .delivered, detail: "Delivered to Device"),
                DeliveryEvent(uniqueID: "b", at: Self.day0 + 70, kind: .stored, detail: "Stored - Device Offline"),
            ])
            let counts = try await store.eventCounts(since: Self.day0, bucket: 60)
            #expect(counts.count == 3)
            #expect(
                Set(counts.map { "\(Int($0.bucket.timeIntervalSince(Self.day0))) \($0.kind.rawValue) \($0.count)" })
                    == ["0 received 2", "0 delivered 1", "60 stored 1"])
        }
    }
}

/// What only PostgreSQL's store does: several nodes on one database.
@Suite(.heavy, .timeLimit(.minutes(3))) struct PostgresGatewayStoreTests {
    @Test("Two nodes issuing a token for the same app at once issue one")
    func oneActiveTokenAcrossNodes() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 2) { stores in
            let issued = try await withThrowingTaskGroup(of: DeviceTokenRecord.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await stores[index % 2].activeToken(
                            deviceID: "d", bundleID: "com.example.app", environment: .development, at: Date())
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1.token) }
            }
            #expect(issued.count == 1)
        }
    }

    @Test("A notification stored on one node is announced to the others in its commit")
    func storedIsAnnounced() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 2) { stores in
            let heard = try await withTimeout(.seconds(30)) {
                try await withThrowingTaskGroup(of: GatewayNodeEvent?.self) { group in
                    group.addTask {
                        for await event in stores[1].nodeEvents() {
                            if case .storedPushArrived = event { return event }
                        }
                        return nil
                    }
                    group.addTask {
                        // Until the listener has begun, an announcement is lost (NOTIFY is a wake-up, not a queue).
                        for index in 0..<100 {
                            _ = try await stores[0].store(GatewayStoreContractTests.notification("u\(index)", device: "far"))
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        return nil
                    }
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
            }
            #expect(heard == .storedPushArrived(deviceID: "far"))
        }
    }

    @Test(
        "Issue 64: a delivery-log write on one node signals the others' log changes (announced after its commit); a node is not woken by its own announcement"
    )
    func logWritesAreAnnounced() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 2) { stores in
            let (theirs, ours) = (stores[1].deliveryLogChanges, stores[0].deliveryLogChanges)
            let before = theirs.generation
            let woke = try await withTimeout(.seconds(30)) {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        await theirs.wait(after: before, timeout: .seconds(30))
                        return theirs.generation != before
                    }
                    group.addTask {
                        // Until the listener has begun, an announcement is lost (NOTIFY is a wake-up, not a queue).
                        for index in 0..<100 {
                            try await stores[0].appendEvents([
                                DeliveryEvent(
                                    uniqueID: "logged-\(index)", at: Date(), kind: .received, detail: DeliveryEvent.receivedDetail
                                )
                            ])
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        return false
                    }
                    defer { group.cancelAll() }
                    return try await group.next() ?? false
                }
            }
            #expect(woke)
            // Node 0 heard its own announcements too, and ignored them: only its own writes changed its log.
            let quiet = ours.generation
            try await Task.sleep(for: .milliseconds(300))
            #expect(ours.generation == quiet, "no write of its own since, so no change")
        }
    }

    @Test(
        "D-04 on several nodes: concurrent pushes relayed or stored in shared commits, each answered, each replacement reported once"
    )
    func relayOrStoreInBatches() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 2) { stores in
            // "here" is connected to the second node, once that node's first heartbeat is in.
            try await eventually("both nodes registered") {
                try await PostgresServer.withConnection(to: url) { connection in
                    try await connection.query("SELECT count(*) FROM gateway_node", logger: Logger(label: "test"))
                        .collect().first?.decode(Int.self) == 2
                }
            }
            try await stores[1].deviceConnected(deviceID: "here", session: "s1", at: Date())
            // Real tokens: each push's token is checked in the same statement.
            func token(_ device: String) async throws -> String {
                try await stores[0].activeToken(
                    deviceID: device, bundleID: "com.example.app", environment: .development, at: Date()
                ).token
            }
            var tokens: [String: String] = [:]
            for device in (0..<10).map({ "d\($0)" }) + ["here", "q", "gone"] { tokens[device] = try await token(device) }
            let offline = (0..<300).map { index in
                var n = GatewayStoreContractTests.notification(
                    "u\(index)", token: tokens["d\(index % 10)"]!, device: "d\(index % 10)", at: Date())
                if index % 3 == 0 { n.collapseID = nil }
                n.payload = Data(#"{"aps":{"alert":"\#(index)"}}"#.utf8)
                return n
            }
            let connected = (0..<50).map { index in
                GatewayStoreContractTests.notification("r\(index)", token: tokens["here"]!, device: "here", at: Date())
            }
            let answers = try await withThrowingTaskGroup(of: (String, SharedDelivery).self) { group in
                for n in offline + connected {
                    group.addTask { (n.uniqueID, try await stores[0].relayOrStore(n)) }
                }
                var answers: [String: SharedDelivery] = [:]
                for try await (id, answer) in group { answers[id] = answer }
                return answers
            }
            #expect(answers.count == 350)
            for n in connected { #expect(answers[n.uniqueID] == .relayed) }
            var replaced: [String] = []
            var firsts = 0
            for n in offline {
                guard case .stored(let previous) = answers[n.uniqueID] else {
                    Issue.record("\(n.uniqueID) was not stored: \(String(describing: answers[n.uniqueID]))")
                    continue
                }
                if let previous { replaced.append(previous) } else { firsts += 1 }
            }
            // Per token and topic one survives; every other one was replaced exactly once, the first of each replaced nothing.
            var survivors: [StoredNotification] = []
            for device in 0..<10 { survivors += try await stores[1].storedNotifications(deviceID: "d\(device)") }
            #expect(firsts == 10)
            #expect(survivors.count == 10)
            #expect(Set(replaced).count == replaced.count)
            #expect(Set(replaced + survivors.map(\.uniqueID)) == Set(offline.map(\.uniqueID)))
            for survivor in survivors {
                let sent = try #require(offline.first { $0.uniqueID == survivor.uniqueID })
                #expect(survivor.payload == sent.payload)
                #expect(survivor.collapseID == sent.collapseID)
            }
            let relayed = try await PostgresServer.withConnection(to: url) { connection in
                try await connection.query(
                    "SELECT count(*) FROM relayed_push WHERE device_id = 'here'", logger: Logger(label: "test")
                )
                .collect().first?.decode(Int.self)
            }
            #expect(relayed == 50)

            // One after another, the later replaces the earlier.
            let first = try await stores[0].relayOrStore(
                GatewayStoreContractTests.notification("s1", token: tokens["q"]!, device: "q"))
            let second = try await stores[0].relayOrStore(
                GatewayStoreContractTests.notification("s2", token: tokens["q"]!, device: "q"))
            #expect(first == .stored(replacing: nil))
            #expect(second == .stored(replacing: "s1"))

            // D-08: a token revoked (on any node) keeps nothing and says when; an unknown one keeps nothing either.
            let revoked = try #require(try await stores[1].revokeToken(tokens["gone"]!, at: Date()))
            let late = try await stores[0].relayOrStore(
                GatewayStoreContractTests.notification("g1", token: tokens["gone"]!, device: "gone"))
            #expect(late == .revoked(at: Date(timeIntervalSince1970: revoked.revokedAt!.timeIntervalSince1970)))
            #expect(try await stores[0].storedNotifications(deviceID: "gone").isEmpty)
            let unknown = try await stores[0].relayOrStore(
                GatewayStoreContractTests.notification("x1", token: "ab12", device: "gone"))
            #expect(unknown == .unknownToken)
        }
    }

    @Test(
        "A node's graceful stop: its coordinator stops before its pool, so the node leaves the registry and gives back its claims"
    )
    func gracefulStopLeavesTheRegistry() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        let far = Date().addingTimeInterval(3_600)
        let node = try await withPostgresStores(url, count: 1) { stores in
            try await eventually("registered") {
                try await PostgresServer.withConnection(to: url) { connection in
                    try await connection.query(
                        "SELECT count(*) FROM gateway_node WHERE id = \(stores[0].nodeID)", logger: Logger(label: "test")
                    ).collect().first?.decode(Int.self) == 1
                }
            }
            _ = try await stores[0].store(GatewayStoreContractTests.notification("held", device: "d"))
            let claimed = try await stores[0].claimStoredNotifications(
                deviceID: "d", claimant: "s", until: far, now: Date(), limit: 10)
            #expect(claimed.count == 1)
            return stores[0].nodeID
        }
        try await PostgresServer.withConnection(to: url) { connection in
            let nodes = try await connection.query(
                "SELECT count(*) FROM gateway_node WHERE id = \(node)", logger: Logger(label: "test")
            ).collect().first?.decode(Int.self)
            #expect(nodes == 0, "the node left the registry")
            let claims = try await connection.query(
                "SELECT count(*) FROM stored_notification WHERE claimed_by IS NOT NULL", logger: Logger(label: "test")
            ).collect().first?.decode(Int.self)
            #expect(claims == 0, "its claims were given back")
        }
    }

    @Test("A node that stops its heartbeat has its claims released by the others")
    func deadNodesClaimsAreReleased() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        var configuration = testStoreConfiguration
        configuration.heartbeatInterval = .milliseconds(200)
        configuration.nodeTimeout = .seconds(1)
        let far = Date().addingTimeInterval(3_600)
        // A node that claims and then dies (its store stops without its graceful goodbye).
        let deadNode = try await withPostgresStores(url, count: 1, configuration: configuration) { stores in
            _ = try await stores[0].store(GatewayStoreContractTests.notification("kept", device: "d"))
            let claimed = try await stores[0].claimStoredNotifications(
                deviceID: "d", claimant: "s", until: far, now: Date(), limit: 10)
            #expect(claimed.count == 1)
            return stores[0].nodeID
        }
        // Its graceful stop gave its claims back; claim again as that node would have, without stopping.
        try await PostgresServer.withConnection(port: url.port, database: url.database) { connection in
            try await connection.query(
                "UPDATE stored_notification SET claimed_by = \(deadNode + "/s"), claimed_until = \(far.timeIntervalSince1970)",
                logger: Logger(label: "test"))
            try await connection.query(
                """
                INSERT INTO gateway_node (id, started_at, heartbeat_at) VALUES (\(deadNode), 0, \(Date().timeIntervalSince1970))
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                """,
                logger: Logger(label: "test"))
        }
        try await withPostgresStores(url, count: 1, configuration: configuration) { stores in
            let taken = try await withTimeout(.seconds(30)) {
                while true {
                    let claimed = try await stores[0].claimStoredNotifications(
                        deviceID: "d", claimant: "t", until: far, now: Date(), limit: 10)
                    if !claimed.isEmpty { return claimed.map(\.uniqueID) }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(taken == ["kept"])
        }
    }

    @Test("A database of a newer schema is refused with a message; an unreachable one is a clear error")
    func refusals() async throws {
        let url = try await PostgresServer.shared.makeDatabase()
        try await withPostgresStores(url, count: 1) { _ in }
        try await PostgresServer.withConnection(port: url.port, database: url.database) { connection in
            try await connection.query(
                "INSERT INTO herald_schema (version, applied_at) VALUES (99, 0)", logger: Logger(label: "test"))
        }
        let newer = try PostgresGatewayStore(url: url, logger: Logger(label: "test"))
        await #expect(throws: GatewayStoreError.newerSchema(found: 99, known: PostgresGatewayStore.migrations.count)) {
            try await newer.prepare()
        }
        var nowhere = url
        nowhere.port = try await PostgresServer.shared.start() == 1 ? 2 : 1  // nothing listens on port 1 or 2
        let unreachable = try PostgresGatewayStore(url: nowhere, logger: Logger(label: "test"))
        do {
            try await unreachable.prepare()
            Issue.record("a store on a port nothing listens on prepared")
        } catch let error as GatewayStoreError {
            guard case .unreachable(let database, _) = error else { throw error }
            #expect(database == "\(nowhere)")
            #expect("\(error)".contains("Check that PostgreSQL runs there"))
        }
    }
}
