// The notification service extension of seeds 001 and 003, ported to Swift against Herald: seed 003 marks the title,
// subtitle and body with " [NotificationService]"; seed 001 downloads the image named by the payload's "image" key into
// an attachment, and delivers its best attempt when the time runs out.
//
// An app declares it in its bundle: PlugIns/NotificationService.appex/Info.plist with NSExtensionPointIdentifier
// com.apple.usernotifications.service and CFBundleExecutable herald-example-service. For Herald's tests, a payload key
// "test" makes it misbehave: "never" (the handler is only called at serviceExtensionTimeWillExpire), "crash", "hang",
// "twice" (the handler called a second time, with other content); "values" says in the content's userInfo how it read
// the payload's values ("extension-read").
import Foundation
import UserNotifications

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
class NotificationService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?

    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        self.contentHandler = contentHandler
        bestAttemptContent = (request.content.mutableCopy() as? UNMutableNotificationContent)

        if let bestAttemptContent = bestAttemptContent {
            // Seed 003: change what is shown.
            bestAttemptContent.title = "\(bestAttemptContent.title) [NotificationService]"
            bestAttemptContent.subtitle = "\(bestAttemptContent.subtitle) [NotificationService]"
            bestAttemptContent.body = "\(bestAttemptContent.body) [NotificationService]"

            switch bestAttemptContent.userInfo["test"] as? String {
            case "never": return  // serviceExtensionTimeWillExpire delivers the best attempt
            case "crash": abort()
            case "hang": while true { sleep(60) }
            case "values":
                // How this process reads the payload's values (issue 69): as JSONSerialization gives them on an
                // iPhone. The answer goes back in the content; the payload's own values go back unchanged.
                let info = request.content.userInfo
                bestAttemptContent.userInfo["extension-read"] = [
                    "yes": info["yes"] as? Int ?? -1, "no": info["no"] as? Int ?? -1,
                    "u64max": (info["u64max"] as? UInt64).map { "\($0)" } ?? "not a UInt64",
                    "nothing": info["nothing"] is NSNull, "arr": (info["arr"] as? [Any])?.count ?? -1,
                ]
            case "twice":
                contentHandler(bestAttemptContent)
                let other = UNMutableNotificationContent()
                other.title = "second call"
                contentHandler(other)
                return
            default: break
            }

            // Seed 001: an image from the payload as an attachment.
            if let imageURLString = bestAttemptContent.userInfo["image"] as? String, let URL = URL(string: imageURLString) {
                downloadAndSave(url: URL) { localURL in
                    if let localURL = localURL {
                        do {
                            let attachment = try UNNotificationAttachment(
                                identifier: "image_downloaded", url: localURL, options: nil)
                            bestAttemptContent.attachments = [attachment]
                        } catch {
                            // The seed prints; standard output is the daemon's channel, so this goes to the device's log.
                            FileHandle.standardError.write(Data("NotificationService: no attachment: \(error)\n".utf8))
                        }
                    }
                    contentHandler(bestAttemptContent)
                }
            } else {
                contentHandler(bestAttemptContent)
            }
        }
    }

    override func serviceExtensionTimeWillExpire() {
        // Called just before the extension will be terminated by the system.
        // Use this as an opportunity to deliver your "best attempt" at modified content, otherwise the original push payload will be used.
        if let contentHandler = contentHandler, let bestAttemptContent = bestAttemptContent {
            contentHandler(bestAttemptContent)
        }
    }

    /// Downloads `url` into a temporary file named like it; `nil` when that fails.
    func downloadAndSave(url: URL, completion: @escaping (URL?) -> Void) {
        URLSession.shared.dataTask(with: url) { data, _, error in
            guard let data else {
                FileHandle.standardError.write(
                    Data("NotificationService: \(url) not downloaded: \(String(describing: error))\n".utf8))
                return completion(nil)
            }
            let file = FileManager.default.temporaryDirectory
                .appendingPathComponent(UUID().uuidString + "-" + url.lastPathComponent)
            completion((try? data.write(to: file)).map { file })
        }.resume()
    }
}
