import CoreLocation
import Foundation
import UIKit
import UserNotifications

extension FuzzTarget {
    /// Every class that adopts `NSSecureCoding` in UserNotifications and UIKit's notification API.
    static let archivedClasses: [NSObject.Type] = [
        UNNotificationAction.self, UNTextInputNotificationAction.self, UNNotificationActionIcon.self,
        UNNotificationSound.self, UNNotification.self, UNNotificationContent.self, UNMutableNotificationContent.self,
        UNNotificationCategory.self, UNNotificationRequest.self, UNNotificationResponse.self,
        UNTextInputNotificationResponse.self, UNNotificationAttachment.self, UNNotificationSettings.self,
        UNTimeIntervalNotificationTrigger.self, UNCalendarNotificationTrigger.self, UNLocationNotificationTrigger.self,
        UILocalNotification.self, UIUserNotificationSettings.self, UIUserNotificationAction.self,
        UIMutableUserNotificationAction.self, UIUserNotificationCategory.self, UIMutableUserNotificationCategory.self,
    ]

    /// `NSKeyedArchiver` archives of every `UN*` and `UI*` class (N-28): what Herald's `init?(coder:)` reads from an
    /// archive — its record — is fuzzed, inside archives Foundation itself can read.
    ///
    /// The input's first byte picks the class (and, with its high bit, archives the record as a string instead of
    /// data); the rest is the record. Decoded with secure coding, a damaged or foreign record is `nil` with the
    /// coder's error set, never a crash; a decoded object archives and decodes again. (Malformed property lists are
    /// Foundation's to read, not Herald's: a crash found there is in docs/reliability.md, not replayed.)
    static let archives = FuzzTarget(
        name: "archives",
        summary: "NSSecureCoding archives of every UN* and UI* notification class (the records their init?(coder:) reads)",
        seeds: {
            ArchiveTemplate.all.enumerated().map { index, template in [UInt8(index)] + template.record }
        },
        run: { input in
            guard let selector = input.first, !ArchiveTemplate.all.isEmpty else { return }
            let template = ArchiveTemplate.all[Int(selector & 0x7F) % ArchiveTemplate.all.count]
            let archive = template.archive(holding: Array(input.dropFirst()), asString: selector & 0x80 != 0)
            guard let decoded = ArchiveTemplate.decode(archive, as: template.type) else { return }
            try require(Swift.type(of: decoded) == template.type, "decoded a \(Swift.type(of: decoded)) for \(template.type)")
            _ = decoded.description
            if let copying = decoded as? any NSCopying { _ = copying.copy(with: nil) }
            let again = ArchiveTemplate.decode(ArchiveTemplate.archive(decoded, format: .binary), as: template.type)
            try require(again != nil, "a decoded \(template.type) does not archive and decode again")
        })

    /// One object of every archived class that public API can make.
    static func sampleArchivedObjects() -> [NSObject] {
        let content = UNMutableNotificationContent()
        content.title = "t"
        content.body = "b"
        content.userInfo = ["k": 1]
        let local = UILocalNotification()
        local.alertBody = "Testing"
        local.fireDate = Date(timeIntervalSince1970: 1_700_000_000)
        local.repeatInterval = .day
        let action = UIMutableUserNotificationAction()
        action.identifier = "accept"
        action.title = "Accept"
        let category = UIMutableUserNotificationCategory()
        category.identifier = "Email"
        category.setActions([action], for: .default)
        // In the order of `archivedClasses` where public API can make one; the seeds say which class by index.
        var objects = [NSObject](repeating: NSObject(), count: archivedClasses.count)
        objects[0] = UNNotificationAction(identifier: "a", title: "A", options: [.foreground])
        objects[1] = UNTextInputNotificationAction(
            identifier: "r", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "…")
        objects[2] = UNNotificationActionIcon(systemImageName: "trash")
        objects[3] = UNNotificationSound.default
        objects[5] = content.copy() as! UNNotificationContent
        objects[6] = content
        objects[7] = UNNotificationCategory(identifier: "c", actions: [], intentIdentifiers: [], options: [.customDismissAction])
        objects[8] = UNNotificationRequest(
            identifier: "r", content: content,
            trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 8), repeats: true))
        objects[13] = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        objects[14] = UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 8, minute: 30), repeats: true)
        objects[15] = UNLocationNotificationTrigger(
            region: CLCircularRegion(
                center: CLLocationCoordinate2D(latitude: 31.2, longitude: 121.5), radius: 100, identifier: "office"),
            repeats: false)
        objects[16] = local
        objects[17] = UIUserNotificationSettings(types: [.alert, .badge], categories: [category])
        objects[19] = action
        objects[21] = category
        return objects
    }
}

/// A class's archive (XML) with its record cut out: fuzzed records go back in its place, so that what is fuzzed is
/// what Herald reads — the record — inside an archive Foundation reads as usual, with the class's real class chain.
struct ArchiveTemplate: @unchecked Sendable {
    let type: NSObject.Type
    /// The archive up to the record's `<data>` element, and after it.
    let prefix: String
    let suffix: String
    /// The record the sample archived.
    let record: [UInt8]

    /// One template per class public API can make an object of.
    static let all: [ArchiveTemplate] = FuzzTarget.sampleArchivedObjects().compactMap { object in
        guard Swift.type(of: object) != NSObject.self else { return nil }
        let xml = String(decoding: archive(object, format: .xml), as: UTF8.self)
        guard let key = xml.range(of: "<key>\(NSCoder.heraldRecordKey)</key>"),
            let open = xml.range(of: "<data>", range: key.upperBound..<xml.endIndex),
            let close = xml.range(of: "</data>", range: open.upperBound..<xml.endIndex),
            let record = Data(base64Encoded: xml[open.upperBound..<close.lowerBound].filter { !$0.isWhitespace })
        else { return nil }
        // The record's key points at the object holding the data; the first <data> after it is that object.
        return ArchiveTemplate(
            type: Swift.type(of: object), prefix: String(xml[..<open.lowerBound]), suffix: String(xml[close.upperBound...]),
            record: [UInt8](record))
    }

    /// The archive with `record` as the object's record: as data, or (`asString`) as a string where data belongs.
    func archive(holding record: [UInt8], asString: Bool) -> Data {
        let element =
            asString
            ? "<string>"
                + String(decoding: record, as: UTF8.self).unicodeScalars
                .filter { $0.value == 0x09 || $0.value == 0x0A || ($0.value >= 0x20 && $0.value != 0xFFFE && $0.value != 0xFFFF) }
                .map { $0 == "<" ? "&lt;" : $0 == "&" ? "&amp;" : String($0) }.joined() + "</string>"
            : "<data>" + Data(record).base64EncodedString() + "</data>"
        return Data((prefix + element + suffix).utf8)
    }

    /// An object's archive.
    static func archive(_ object: NSObject, format: PropertyListSerialization.PropertyListFormat) -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.outputFormat = format
        archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    /// The root object of `archive` as `type`, decoded with secure coding; `nil` when it cannot be.
    static func decode(_ archive: Data, as type: NSObject.Type) -> NSObject? {
        guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: archive) else { return nil }
        unarchiver.requiresSecureCoding = true
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        return unarchiver.decodeObject(of: [type], forKey: NSKeyedArchiveRootObjectKey) as? NSObject
    }
}
