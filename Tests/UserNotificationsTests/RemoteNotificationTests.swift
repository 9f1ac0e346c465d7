import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldTesting
import Testing
import UserNotifications

@testable import HeraldNotificationEngine

/// A push for an app on this device becomes a `UNNotification` with a push trigger and goes the way a local one
/// does: the app's settings, its foreground delegate, the delivered list.
@Suite struct RemoteNotificationTests {
    static func request(
        _ json: String, apnsID: String = UUID().uuidString, collapseID: String? = nil
    ) throws
        -> NotificationRequestRecord
    {
        NotificationRequestRecord(
            remote: try RemoteNotificationContent(payload: Data(json.utf8)), apnsID: apnsID, collapseID: collapseID)
    }

    @Test("T-2 N-7: a push reaches the foreground delegate with a push trigger and its payload as userInfo, then the list")
    func foreground() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate()
        center.delegate = delegate
        let apnsID = "7C1F3E5A-0B2D-4E6F-8A9B-1C2D3E4F5A6B"
        let kept = try await device.engine.receiveRemote(
            Self.request(
                #"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":2,"category":"GAME_INVITATION"},"gameID":"12345678"}"#,
                apnsID: apnsID),
            for: device.bundleIdentifier)
        #expect(kept == .kept)
        await device.settle()
        let presented = try #require(delegate.presented.first)
        #expect(presented.request.identifier == apnsID)
        #expect(presented.request.trigger is UNPushNotificationTrigger)
        #expect(presented.request.content.title == "Game Request")
        #expect(presented.request.content.userInfo["gameID"] as? String == "12345678")
        #expect((presented.request.content.userInfo["aps"] as? [String: Any])?["category"] as? String == "GAME_INVITATION")
        #expect(await center.deliveredNotifications().map(\.request.identifier) == [apnsID])
        #expect(try await device.badgeCount() == 2)
        #expect(await center.pendingNotificationRequests().isEmpty, "a push is never one of the app's pending requests")
    }

    @Test("apns-collapse-id is the identifier: a second push with it replaces the first in the list")
    func collapse() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        for score in ["1-0", "2-0"] {
            try await device.engine.receiveRemote(
                Self.request(#"{"aps":{"alert":"Score \#(score)"}}"#, collapseID: "match-7"), for: device.bundleIdentifier)
            await device.settle()
        }
        let delivered = await center.deliveredNotifications()
        #expect(delivered.map(\.request.identifier) == ["match-7"])
        #expect(delivered.first?.request.content.body == "Score 2-0")
        #expect(device.presenter.presentations.map(\.body) == ["Score 1-0", "Score 2-0"])
    }

    @Test("B-5: an app whose notifications are off gets nothing shown; a push never displaces a local request")
    func deniedAndLimits() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        await device.user.willAnswerAuthorization(.deny)
        _ = try await center.requestAuthorization(options: [.alert])
        let kept = try await device.engine.receiveRemote(
            Self.request(#"{"aps":{"alert":"hidden"}}"#), for: device.bundleIdentifier)
        #expect(kept == .notAllowed)
        await device.settle()
        #expect(device.presenter.presentations.isEmpty)

        let (allowed, allowedCenter) = try await makeAuthorizedDevice()
        for index in 0..<64 { try await allowedCenter.add(makeRequest("local-\(index)", after: 3_600 + Double(index))) }
        try await allowed.engine.receiveRemote(
            Self.request(#"{"aps":{"alert":"same id"}}"#, collapseID: "local-0"), for: allowed.bundleIdentifier)
        await allowed.settle()
        let pending = await allowedCenter.pendingNotificationRequests()
        #expect(pending.count == 64 && pending.first?.identifier == "local-0", "the local request is untouched")
        #expect(await allowedCenter.deliveredNotifications().map(\.request.content.body) == ["same id"])
    }

    @Test("A push kept before a crash is presented after the restart, once")
    func durable() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("notifications.sqlite")
        let (device, center) = try await makeAuthorizedDevice(databaseURL: url)
        center.delegate = nil
        device.setForeground(false)
        let push = try Self.request(#"{"aps":{"alert":"kept"}}"#)
        #expect(try await device.engine.receiveRemote(push, deliveryID: "d-1", for: device.bundleIdentifier) == .kept)
        try await device.restart()
        // The gateway delivers it again (the acknowledgement was lost with the crash): recognised, not shown twice.
        #expect(try await device.engine.receiveRemote(push, deliveryID: "d-1", for: device.bundleIdentifier) == .duplicate)
        await device.settle()
        #expect(device.presenter.presentations.map(\.body) == ["kept"])
        #expect(await device.center().deliveredNotifications().count == 1)
    }

    @Test(
        "A provider's retry of a shown push (same fingerprint, a new delivery ID: the gateway crashed before answering) is recognised after a restart, for a day; another notification is not"
    )
    func providerRetry() async throws {
        let url = try makeTemporaryDirectory().appendingPathComponent("notifications.sqlite")
        let (device, center) = try await makeAuthorizedDevice(databaseURL: url)
        center.delegate = nil
        device.setForeground(false)
        let push = try Self.request(#"{"aps":{"alert":"once"}}"#)
        #expect(
            try await device.engine.receiveRemote(push, deliveryID: "d-1", fingerprint: "f-1", for: device.bundleIdentifier)
                == .kept)
        try await device.restart()
        #expect(
            try await device.engine.receiveRemote(push, deliveryID: "d-2", fingerprint: "f-1", for: device.bundleIdentifier)
                == .duplicate)
        // The same delivery again is still recognised by its delivery ID.
        #expect(
            try await device.engine.receiveRemote(push, deliveryID: "d-1", fingerprint: "f-1", for: device.bundleIdentifier)
                == .duplicate)
        let other = try Self.request(#"{"aps":{"alert":"other"}}"#)
        #expect(
            try await device.engine.receiveRemote(other, deliveryID: "d-3", fingerprint: "f-2", for: device.bundleIdentifier)
                == .kept)
        await device.settle()
        #expect(device.presenter.presentations.map(\.body) == ["once", "other"])
        // A day later the same notification with the same apns-id is a new one (a provider that reuses ids on purpose).
        await device.advance(by: 24 * 3_600 + 1)
        #expect(
            try await device.engine.receiveRemote(push, deliveryID: "d-4", fingerprint: "f-1", for: device.bundleIdentifier)
                == .kept)
        await device.settle()
        #expect(device.presenter.presentations.map(\.body) == ["once", "other", "once"])
    }
}
