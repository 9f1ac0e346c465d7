import Foundation
import HeraldTesting
import Testing
import UserNotifications

@Suite struct AttachmentTests {
    @Test("N-40: type from the extension, or from the type hint; empty identifier gets a unique one")
    func typeDetection() throws {
        let folder = try makeTemporaryDirectory()
        let png = try writeFile("image.png", header: pngHeader, in: folder)
        let attachment = try UNNotificationAttachment(identifier: "", url: png, options: nil)
        #expect(attachment.type == "public.png")
        #expect(!attachment.identifier.isEmpty)
        let noExtension = try writeFile("download", header: jpegHeader, in: folder)
        let hinted = try UNNotificationAttachment(
            identifier: "i", url: noExtension, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg"]
        )
        #expect(hinted.type == "public.jpeg")
    }

    @Test("B-40, §1.11: each kind of bad file gets its own UNError code")
    func errors() throws {
        let folder = try makeTemporaryDirectory()
        func code(_ body: () throws -> Void) -> UNError.Code? {
            do {
                try body()
                return nil
            } catch {
                return (error as? UNError)?.code
            }
        }
        #expect(
            code { _ = try UNNotificationAttachment(identifier: "a", url: folder.appendingPathComponent("missing.png")) }
                == .attachmentInvalidURL)
        #expect(
            code { _ = try UNNotificationAttachment(identifier: "a", url: URL(string: "https://example.com/a.png")!) }
                == .attachmentInvalidURL)
        #expect(code { _ = try UNNotificationAttachment(identifier: "a", url: folder) } == .attachmentInvalidURL)
        let noExtension = try writeFile("download", header: pngHeader, in: folder)
        #expect(code { _ = try UNNotificationAttachment(identifier: "a", url: noExtension) } == .attachmentUnrecognizedType)
        let text = try writeFile("notes.txt", header: Array("hello".utf8), in: folder)
        #expect(code { _ = try UNNotificationAttachment(identifier: "a", url: text) } == .attachmentUnrecognizedType)
        let fake = try writeFile("fake.png", header: Array("not a png at all".utf8), in: folder)
        #expect(code { _ = try UNNotificationAttachment(identifier: "a", url: fake) } == .attachmentCorrupt)
        let empty = try writeFile("empty.jpg", header: [], size: 0, in: folder)
        #expect(code { _ = try UNNotificationAttachment(identifier: "a", url: empty) } == .attachmentInvalidFileSize)
    }

    @Test("§1.7: per-type size limits — audio 5 MB, image 10 MB, movie 50 MB")
    func sizeLimits() throws {
        let folder = try makeTemporaryDirectory()
        let mb = 1024 * 1024
        let mp3 = Array("ID3".utf8)
        let mp4: [UInt8] = [0, 0, 0, 0x18] + Array("ftypmp42".utf8)
        #expect(throws: Never.self) {
            try UNNotificationAttachment(identifier: "a", url: writeFile("a.mp3", header: mp3, size: 5 * mb, in: folder))
        }
        #expect(throws: UNError.self) {
            try UNNotificationAttachment(identifier: "a", url: writeFile("b.mp3", header: mp3, size: 5 * mb + 1, in: folder))
        }
        #expect(throws: Never.self) {
            try UNNotificationAttachment(identifier: "i", url: writeFile("a.png", header: pngHeader, size: 10 * mb, in: folder))
        }
        #expect(throws: UNError.self) {
            try UNNotificationAttachment(
                identifier: "i", url: writeFile("b.png", header: pngHeader, size: 10 * mb + 1, in: folder))
        }
        #expect(throws: Never.self) {
            try UNNotificationAttachment(identifier: "m", url: writeFile("a.mp4", header: mp4, size: 50 * mb, in: folder))
        }
        #expect(throws: UNError.self) {
            try UNNotificationAttachment(identifier: "m", url: writeFile("b.mp4", header: mp4, size: 50 * mb + 1, in: folder))
        }
    }

    @Test("B-41, B-42: adding moves the file into the data store; it is removed when its notification goes")
    func lifecycle() async throws {
        let folder = try makeTemporaryDirectory()
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        let source = try writeFile("photo.png", header: pngHeader, in: folder)
        let content = makeContent("media")
        content.attachments = [try UNNotificationAttachment(identifier: "photo", url: source)]
        try await center.add(
            UNNotificationRequest(
                identifier: "m", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
        #expect(!FileManager.default.fileExists(atPath: source.path))
        let stored = try #require(await center.pendingNotificationRequests().first?.content.attachments.first)
        #expect(stored.url.path.hasPrefix(device.attachmentStore.path))
        #expect(stored.url.startAccessingSecurityScopedResource())
        #expect(FileManager.default.fileExists(atPath: stored.url.path))
        stored.url.stopAccessingSecurityScopedResource()
        await device.advance(by: 5)
        let delivered = try #require(await center.deliveredNotifications().first?.request.content.attachments.first)
        #expect(delivered.url == stored.url)
        center.removeAllDeliveredNotifications()
        await device.settle()
        #expect(!FileManager.default.fileExists(atPath: stored.url.path))
    }

    @Test("B-41: a file inside a bundle is copied, not moved")
    func bundleFileIsCopied() async throws {
        let image = try #require(Bundle.module.url(forResource: "onevcat", withExtension: "jpg", subdirectory: "Fixtures"))
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        let content = makeContent("media")
        content.attachments = [try UNNotificationAttachment(identifier: "onevcat", url: image, options: nil)]
        try await center.add(UNNotificationRequest(identifier: "media", content: content, trigger: nil))
        await device.settle()
        #expect(FileManager.default.fileExists(atPath: image.path))
        let delivered = try #require(await center.deliveredNotifications().first?.request.content.attachments.first)
        #expect(delivered.url.path.hasPrefix(device.attachmentStore.path))
    }

    @Test("B-40: a file that vanished between creating the attachment and add is not scheduled")
    func vanishedFile() async throws {
        let folder = try makeTemporaryDirectory()
        let device = try NotificationTestEnvironment()
        let center = device.center()
        let source = try writeFile("gone.png", header: pngHeader, in: folder)
        let content = makeContent("x")
        content.attachments = [try UNNotificationAttachment(identifier: "a", url: source)]
        try FileManager.default.removeItem(at: source)
        await #expect(throws: UNError.self) {
            try await center.add(UNNotificationRequest(identifier: "x", content: content, trigger: nil))
        }
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("Replacing or removing a pending request removes its files; a repeating request keeps them")
    func replacedFilesGo() async throws {
        let folder = try makeTemporaryDirectory()
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        func request(_ name: String, repeats: Bool = false) throws -> UNNotificationRequest {
            let content = makeContent(name)
            content.attachments = [
                try UNNotificationAttachment(identifier: name, url: try writeFile("\(name).png", header: pngHeader, in: folder))
            ]
            return UNNotificationRequest(
                identifier: "same", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: repeats))
        }
        try await center.add(try request("first"))
        let first = try #require(await center.pendingNotificationRequests().first?.content.attachments.first?.url)
        try await center.add(try request("second", repeats: true))
        await device.settle()
        #expect(!FileManager.default.fileExists(atPath: first.path))
        let second = try #require(await center.pendingNotificationRequests().first?.content.attachments.first?.url)
        await device.advance(by: 120)
        #expect(FileManager.default.fileExists(atPath: second.path))
        center.removeAllPendingNotificationRequests()
        await device.settle()
        #expect(FileManager.default.fileExists(atPath: second.path))  // the delivered copy still shows it
        center.removeAllDeliveredNotifications()
        await device.settle()
        #expect(!FileManager.default.fileExists(atPath: second.path))
    }
}
