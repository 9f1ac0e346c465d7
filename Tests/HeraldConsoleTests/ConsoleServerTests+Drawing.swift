import Foundation
import GatewayTestSupport
import HeraldConsole
import HeraldCore
import HeraldGatewayStore
import HeraldTesting
import NIOHTTP1
import Testing

extension ConsoleServerTests {
    /// A delivered notification as the device keeps it: long text, an image attachment, a category with actions.
    static func drawnNotification(attachment: URL, uniqueID: String? = nil) -> TestBedNotification {
        var notification = TestBedNotification(bundleID: "com.example.herald", list: .delivered, identifier: "lunch")
        notification.title = "Lunch with the whole design team at the new place on the corner of Market Street"
        notification.subtitle = "Friday, 12:30 — table for eight, by the window"
        notification.body = String(repeating: "Bring the sketches for the onboarding screens and the icon drafts. ", count: 8)
        notification.categoryIdentifier = "invite"
        notification.attachments = [("menu", "public.png"), ("voice-note", "public.mp3")]
        notification.attachmentFiles = [attachment, attachment.deletingLastPathComponent().appendingPathComponent("note.mp3")]
        notification.date = Date().addingTimeInterval(-300)
        notification.uniqueID = uniqueID
        return notification
    }

    static let drawnCategories = [
        TestBedCategory(
            identifier: "invite",
            actions: [
                .init(identifier: "accept", title: "Accept"),
                .init(
                    identifier: "reply", title: "Reply",
                    textInput: .init(buttonTitle: "Send", placeholder: "Say something <nice>")),
                .init(identifier: "decline", title: "Decline", destructive: true),
            ])
    ]

    /// A small PNG (a 2×2 image) in a scratch folder.
    static func pngFile() throws -> URL {
        let folder = try ScratchFolder.make("herald-drawing")
        let file = folder.appendingPathComponent("menu.png")
        let png = Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
        )!
        try png.write(to: file)
        return file
    }

    @Test(
        "Issue 64 (9): the devices page draws what the device delivered — lock screen, banner, expanded — with its category's actions (a text input's placeholder, a destructive one), its image's thumbnail served to a signed-in browser only, a sound attachment named; the delivery log draws a push from its payload, or as the device shows it when it has it"
    )
    func drawings() async throws {
        let png = try Self.pngFile()
        let device = ListedDevice(apps: ["com.example.herald"])
        device.add(Self.drawnNotification(attachment: png))
        device.setCategories(Self.drawnCategories, of: "com.example.herald")
        try await withConsole(device: device) { harness, browser, token in
            let attachmentPath = "/devices/attachment?app=com.example.herald&id=lunch&index=0"
            #expect(try await browser.get(attachmentPath).status == 401, "not signed in")
            try await logIn(browser, token)
            let page = try await browser.get("/devices").body
            let drawn = try #require(page.components(separatedBy: "<h2>On this device</h2>").last)
            #expect(drawn.components(separatedBy: #"<div class="notification">"#).count == 2, "one notification: \(drawn)")
            for figure in ["Lock screen", "Banner", "Expanded"] { #expect(drawn.contains("<figcaption>\(figure)</figcaption>")) }
            #expect(drawn.contains(#"<div class="title">Lunch with the whole design team"#))
            #expect(drawn.contains(#"<span class="time">5m ago</span>"#), "\(drawn)")
            #expect(
                drawn.components(
                    separatedBy:
                        #"<img class="thumbnail" src="/devices/attachment?app=com.example.herald&amp;id=lunch&amp;index=0""#
                ).count == 3)
            #expect(
                drawn.contains(
                    #"<img class="attachment" src="/devices/attachment?app=com.example.herald&amp;id=lunch&amp;index=0" alt="menu">"#
                ))
            #expect(drawn.contains(#"<div class="other">voice-note (public.mp3)</div>"#))
            #expect(
                drawn.contains(#"<div class="action">Accept</div>"#)
                    && drawn.contains(#"<div class="action destructive">Decline</div>"#))
            #expect(drawn.contains(#"placeholder="Say something &lt;nice&gt;""#) && drawn.contains(">Send</button>"))

            let image = try await browser.get(attachmentPath)
            #expect(image.status == 200 && image.headers.first(name: "content-type") == "image/png")
            #expect(
                try await browser.get("/devices/attachment?app=com.example.herald&id=lunch&index=1").status == 404, "not an image"
            )
            #expect(try await browser.get("/devices/attachment?app=com.example.herald&id=nope&index=0").status == 404)
            #expect(try await browser.get("/devices/attachment?app=com.example.herald&id=lunch&index=7").status == 404)

            // The delivery log: a push the device does not have is drawn from its payload, with the app's actions.
            let offline = try await harness.offlineToken(device: "drawn-phone")
            let jwt = try harness.jwt()  // one provider token for both pushes: a new one each time is refused (429)
            let pushed = try await browser.provider.push(
                port: harness.tlsPort, token: offline.token,
                headers: [("authorization", "bearer \(jwt)"), ("apns-topic", "com.example.herald")],
                body: #"{"aps":{"alert":{"title":"Payload <title>","body":"Line one\nline two"},"category":"invite"}}"#)
            let uniqueID = try #require(pushed.headers.first(name: "apns-unique-id"))
            let log = try await browser.get("/log?id=\(uniqueID)").body
            #expect(
                log.contains("As its payload reads") && log.contains(#"<div class="title">Payload &lt;title&gt;</div>"#), "\(log)"
            )
            #expect(log.contains("Line one\nline two") && log.contains(#"<div class="action destructive">Decline</div>"#))
            // Once the device has it (a service extension changed its title), the log draws what the device shows.
            var shown = Self.drawnNotification(attachment: png, uniqueID: uniqueID)
            shown.identifier = "from-push"
            shown.title = "Changed by the extension"
            device.add(shown)
            let drawnFromDevice = try await browser.get("/log?id=\(uniqueID)").body
            #expect(drawnFromDevice.contains("As the device shows it") && drawnFromDevice.contains("Changed by the extension"))
            // A push that shows nothing (a background push) is not drawn.
            let silent = try await browser.provider.push(
                port: harness.tlsPort, token: offline.token,
                headers: [
                    ("authorization", "bearer \(jwt)"), ("apns-topic", "com.example.herald"),
                    ("apns-push-type", "background"), ("apns-priority", "5"),
                ],
                body: #"{"aps":{"content-available":1}}"#)
            let silentID = try #require(silent.headers.first(name: "apns-unique-id"), "\(silent.status) \(silent.body)")
            #expect(!(try await browser.get("/log?id=\(silentID)").body.contains(#"id="drawing""#)))
        }
    }
}
