import Foundation
import HeraldTesting
import Testing
import UserNotifications

/// A test device whose default app has been allowed alerts, sounds and badges.
func makeAuthorizedDevice(databaseURL: URL? = nil) async throws -> (NotificationTestEnvironment, UNUserNotificationCenter) {
    let device = try NotificationTestEnvironment(databaseURL: databaseURL)
    let center = device.center()
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    return (device, center)
}

/// Content with a title and body, the most common shape in the seeds.
func makeContent(_ title: String, body: String = "body") -> UNMutableNotificationContent {
    let content = UNMutableNotificationContent()
    content.title = title
    content.body = body
    return content
}

/// A request that fires after `seconds`.
func makeRequest(
    _ identifier: String, after seconds: TimeInterval = 5, repeats: Bool = false, title: String? = nil
) -> UNNotificationRequest {
    UNNotificationRequest(
        identifier: identifier, content: makeContent(title ?? identifier),
        trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats)
    )
}

/// A fresh temporary directory, removed when the test process ends.
func makeTemporaryDirectory() throws -> URL {
    try ScratchFolder.make()
}

/// Writes a file whose first bytes are `header`, padded to `size` bytes.
func writeFile(_ name: String, header: [UInt8], size: Int = 512, in directory: URL) throws -> URL {
    var bytes = header
    if bytes.count < size { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
    let url = directory.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url
}

let pngHeader: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
let jpegHeader: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]

/// A delegate that records what the center tells it and answers `willPresent` with `options`.
final class RecordingDelegate: NSObject, UNUserNotificationCenterDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _presented: [UNNotification] = []
    private var _responses: [UNNotificationResponse] = []
    var options: UNNotificationPresentationOptions

    init(options: UNNotificationPresentationOptions = [.banner, .list, .sound, .badge]) {
        self.options = options
    }

    var presented: [UNNotification] { lock.withLock { _presented } }
    var responses: [UNNotificationResponse] { lock.withLock { _responses } }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        lock.withLock { _presented.append(notification) }
        completionHandler(options)
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        lock.withLock { _responses.append(response) }
        completionHandler()
    }
}
