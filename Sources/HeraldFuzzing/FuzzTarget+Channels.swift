import Foundation
import HeraldCore
import HeraldDeviceProtocol
import UserNotifications

extension FuzzTarget {
    /// Device-channel messages (gateway ↔ device, one JSON object per WebSocket text frame): what is read is written
    /// back as the same message.
    static let deviceChannel = FuzzTarget(
        name: "device-channel",
        summary: "device-channel messages (gateway <-> device daemon, JSON text frames), read and written back",
        seeds: {
            let push = DevicePush(
                deliveryID: "d-1", token: "aa11", topic: "com.example.app", bundleID: "com.example.app", pushType: "alert",
                priority: 10, apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b", collapseID: "c",
                payload: #"{"aps":{"alert":"Hi"}}"#,
                fromStorage: true)
            let messages: [DeviceChannelMessage] = [
                .hello(deviceID: "phone", secret: "s"), .welcome(deviceID: "phone"),
                .register(bundleID: "com.example.app", environment: .development, purpose: .app),
                .registered(bundleID: "com.example.app", environment: .production, purpose: .voip, token: "aa11"),
                .unregister(bundleID: "com.example.app", environment: .development, purpose: .liveActivity(activityID: "a1")),
                .push(push), .ack(deliveryID: "d-1"),
                .error("no"),
                .unregistered(
                    bundleID: "com.example.app", environment: .production, purpose: .pushToStart(attributesType: "Score")),
            ]
            return messages.map { Array($0.jsonText().utf8) }
        },
        run: { input in
            guard let message = DeviceChannelMessage(jsonText: input.text) else { return }
            let again = DeviceChannelMessage(jsonText: message.jsonText())
            try require(again == message, "read \(message), wrote \(message.jsonText()), read back \(String(describing: again))")
        })

    /// App-channel messages (app ↔ device daemon, one JSON object per line): what is read is written back as the
    /// same message.
    static let appChannel = FuzzTarget(
        name: "app-channel",
        summary: "app-channel messages (app <-> device daemon, JSON lines), read and written back",
        seeds: {
            let messages: [AppChannelMessage] = [
                .hello(bundleID: "com.example.app", foreground: true, delegate: true), .state(foreground: false, delegate: true),
                .change(id: 8, bundleID: "com.example.app", change: .setBadgeCount(3)),
                .change(
                    id: 9, bundleID: "com.example.app", change: .interact(.reply(action: "reply", text: "hi"), notification: "n1")
                ),
                .change(id: 10, bundleID: "", change: .updateLocation(latitude: 52.5, longitude: 13.4)),
                .applied(id: 8, outcome: .granted(true)), .refused(id: 9, failure: .notification(code: 1600, reason: nil)),
                .register(id: 1, environment: "development", bundlePath: "/apps/Example.app"), .unregister(id: 2),
                .presented(id: 3, options: 27), .received(id: 4, handled: true), .fetched(id: 5, result: nil), .welcome,
                .registered(id: 1, token: "aa11"), .unregistered(id: 2), .failed(id: 6, message: "no"),
                .backgroundPush(id: 7, payload: #"{"aps":{"content-available":1}}"#),
            ]
            return messages.map { [UInt8]($0.encoded()) }
        },
        run: { input in
            guard let message = try? AppChannelMessage(line: Data(input)) else { return }
            let again = try? AppChannelMessage(line: message.encoded())
            try require(again == message, "read \(message), read back \(String(describing: again))")
        })
}
