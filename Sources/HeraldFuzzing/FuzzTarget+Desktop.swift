import HeraldDevice

extension FuzzTarget {
    /// D-Bus messages from the session bus (the desktop presenter's notification server, UnifiedPush's connectors): the
    /// message length read from a header, and a whole message read and written back.
    static let dbus = FuzzTarget(
        name: "dbus",
        summary: "D-Bus messages from the session bus (desktop notifications, UnifiedPush), framing and reading",
        seeds: {
            let messages: [DBusMessage] = [
                .call(
                    serial: 1, destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                    interface: "org.freedesktop.Notifications", member: "Notify",
                    body: [
                        .string("herald"), .uint32(0), .string(""), .string("Title"), .string("Body"),
                        .strings(["default", "Open"]), .dictionary([("urgency", .byte(1)), ("x", .int32(-3))]), .int32(-1),
                    ]),
                DBusMessage(
                    kind: .signal, serial: 9, path: "/org/freedesktop/Notifications",
                    interface: "org.freedesktop.Notifications", member: "ActionInvoked",
                    sender: ":1.4", body: [.uint32(7), .string("default")]),
                DBusMessage(kind: .methodReturn, serial: 3, replySerial: 1, destination: ":1.9", body: [.uint32(7)]),
                .call(
                    serial: 5, destination: "org.unifiedpush.Distributor.herald", path: "/org/unifiedpush/Distributor",
                    interface: "org.unifiedpush.Distributor2", member: "Register",
                    body: [
                        .dictionary([
                            ("service", .string("org.example.Chat")), ("token", .string("3f1c")),
                            ("description", .string("Chat")), ("vapid", .string("BEl6")),
                        ])
                    ]),
                DBusMessage(
                    kind: .methodCall, flags: .noReplyExpected, serial: 6, path: "/org/unifiedpush/Connector",
                    interface: "org.unifiedpush.Connector2", member: "Message", destination: "org.example.Chat",
                    body: [
                        .dictionary([
                            ("token", .string("3f1c")), ("message", .bytes([0xc3, 0x00, 0x10])), ("id", .string("m1")),
                            ("nested", .dictionary([("on", .boolean(true))])),
                        ])
                    ]),
                DBusMessage(
                    kind: .error, serial: 4, errorName: "org.freedesktop.DBus.Error.Failed", replySerial: 2,
                    body: [.string("no"), .signature("as"), .objectPath("/a")]),
            ]
            return messages.map { $0.encoded() }
        },
        run: { input in
            if let length = try? DBusMessage.length(ofMessageStartingWith: input) {
                try require(length >= 16, "a message of \(length) bytes")
            }
            guard var message = try? DBusMessage(bytes: input) else { return }
            // Written and read back, it is the same message — but for its sender, which only the bus sets (a client
            // never writes one).
            message.sender = nil
            let again = try? DBusMessage(bytes: message.encoded())
            try require(again == message, "read \(message), read back \(String(describing: again))")
        })
}
