import CoreLocation
import Foundation
import HeraldTesting
import Testing
import UserNotifications

/// Malformed and foreign archives, and `UNError` as a hashable value: what an outside test suite does with the API.
@Suite struct ArchivingRobustnessTests {
    /// One object of every class that adopts `NSSecureCoding`, by name.
    static func sample(_ name: String) throws -> NSObject {
        let content = UNMutableNotificationContent()
        content.title = "t"
        let notification = UNNotification.testing(identifier: "n", content: content)
        switch name {
        case "UNNotificationAction": return UNNotificationAction(identifier: "a", title: "A")
        case "UNTextInputNotificationAction":
            return UNTextInputNotificationAction(
                identifier: "r", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "…")
        case "UNNotificationActionIcon": return UNNotificationActionIcon(systemImageName: "trash")
        case "UNNotificationSound": return UNNotificationSound.default
        case "UNNotification": return notification
        case "UNNotificationContent": return content.copy() as! UNNotificationContent
        case "UNMutableNotificationContent": return content
        case "UNNotificationCategory": return UNNotificationCategory(identifier: "c", actions: [], intentIdentifiers: [])
        case "UNNotificationRequest": return UNNotificationRequest(identifier: "r", content: content, trigger: nil)
        case "UNNotificationResponse": return UNNotificationResponse.testing(notification: notification)
        case "UNTextInputNotificationResponse":
            return UNTextInputNotificationResponse.testing(notification: notification, actionIdentifier: "r", userText: "hi")
        case "UNNotificationAttachment":
            let url = try #require(Bundle.module.url(forResource: "Fixtures/onevcat", withExtension: "jpg"))
            return try UNNotificationAttachment(identifier: "img", url: url)
        case "UNNotificationSettings": return UNNotificationSettings.testing(authorizationStatus: .authorized)
        case "UNTimeIntervalNotificationTrigger": return UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)
        case "UNCalendarNotificationTrigger":
            return UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 8), repeats: true)
        case "UNLocationNotificationTrigger":
            return UNLocationNotificationTrigger(
                region: CLCircularRegion(
                    center: CLLocationCoordinate2D(latitude: 31.2, longitude: 121.5), radius: 100, identifier: "office"),
                repeats: false)
        default: throw TestError.unknownClass(name)
        }
    }

    enum TestError: Error { case unknownClass(String) }

    static let classes = [
        "UNNotificationAction", "UNTextInputNotificationAction", "UNNotificationActionIcon", "UNNotificationSound",
        "UNNotification", "UNNotificationContent", "UNMutableNotificationContent", "UNNotificationCategory",
        "UNNotificationRequest", "UNNotificationResponse", "UNTextInputNotificationResponse", "UNNotificationAttachment",
        "UNNotificationSettings", "UNTimeIntervalNotificationTrigger", "UNCalendarNotificationTrigger",
        "UNLocationNotificationTrigger",
    ]

    /// `object`'s archive as XML, changed by `edit`: how an archive of another framework or version, or a damaged
    /// one, looks to Herald.
    static func archive(_ object: NSObject, edit: (String) -> String) throws -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.outputFormat = .xml
        archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let xml = String(decoding: archiver.encodedData, as: UTF8.self)
        #expect(xml.contains("<key>HeraldRecord</key>"))
        return Data(edit(xml).utf8)
    }

    @Test(
        "N-28 GAP: an archive without Herald's record, or with a damaged one, decodes as nil with the coder's error set; nothing crashes",
        arguments: classes)
    func foreignArchivesDecodeAsNil(_ name: String) throws {
        let object = try Self.sample(name)
        let type = type(of: object)
        let damaged = Data(#"{"truncated":"#.utf8).base64EncodedString()
        let archives = [
            // Someone else's keys (Apple's private ones, say): no HeraldRecord at all.
            try Self.archive(object) { $0.replacingOccurrences(of: "<key>HeraldRecord</key>", with: "<key>NSIdentifier</key>") },
            // HeraldRecord holding the archive's null object instead of data.
            try Self.archive(object) { xml in
                xml.replacingOccurrences(
                    of: #"<key>HeraldRecord</key>\s*<dict>\s*<key>CF\$UID</key>\s*<integer>\d+</integer>"#,
                    with: "<key>HeraldRecord</key><dict><key>CF$UID</key><integer>0</integer>", options: .regularExpression)
            },
            // A damaged record: JSON cut short.
            try Self.archive(object) { xml in
                xml.replacingOccurrences(of: #"<data>[^<]*</data>"#, with: "<data>\(damaged)</data>", options: .regularExpression)
            },
        ]
        // The unchanged archive still round-trips.
        let intact = try Self.archive(object) { $0 }
        #expect(try NSKeyedUnarchiver.unarchivedObject(ofClasses: [type], from: intact) != nil, "\(name)")
        for archive in archives {
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archive)
            unarchiver.decodingFailurePolicy = .setErrorAndReturn
            let decoded = unarchiver.decodeObject(of: [type], forKey: NSKeyedArchiveRootObjectKey)
            #expect(decoded == nil, "\(name)")
            #expect(unarchiver.error != nil, "\(name): no error set")
            // The convenience APIs report it as a thrown error or nil, also those whose unarchiver raises on failure.
            let value = try? NSKeyedUnarchiver.unarchivedObject(ofClasses: [type], from: archive)
            #expect(value == nil, "\(name)")
            let topLevel = try? NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(archive)
            #expect(topLevel == nil, "\(name)")
        }
        // init?(coder:) called directly on a coder that holds no record (its keys are the archive's top level): nil,
        // and no crash when the coder would raise (Foundation on Linux logs the error of a direct call rather than
        // keeping it, so only the unarchiver's own error is checked above).
        for policy in [NSCoder.DecodingFailurePolicy.setErrorAndReturn, .raiseException] {
            let coder = try NSKeyedUnarchiver(forReadingFrom: intact)
            coder.requiresSecureCoding = false
            coder.decodingFailurePolicy = policy
            let codingType = try #require(type as? any NSCoding.Type)
            let decoded = codingType.init(coder: coder)
            #expect(decoded == nil, "\(name)")

        }
    }

    @Test("Bytes that are not an archive at all are an error, not a crash")
    func garbage() {
        #expect(throws: (any Error).self) {
            _ = try NSKeyedUnarchiver.unarchivedObject(ofClass: UNNotificationRequest.self, from: Data("garbage".utf8))
        }
    }

    @Test("§1.11: UNError hashes like the NSError it bridges: as a Set element, a dictionary key, and hashValue")
    func errorsAreHashable() {
        let a = UNError(.notificationsNotAllowed)
        let same = UNError(.notificationsNotAllowed)
        let other = UNError(.badgeInputInvalid)
        #expect(a == same)
        #expect(a != other)
        #expect(a.hashValue == same.hashValue)
        let set: Set<UNError> = [a, same, other]
        #expect(set.count == 2)
        let counts: [UNError: Int] = [a: 1, other: 2]
        #expect(counts[same] == 1)
        #expect(Set([UNError.Code.attachmentCorrupt, .attachmentCorrupt]).count == 1)
    }
}
