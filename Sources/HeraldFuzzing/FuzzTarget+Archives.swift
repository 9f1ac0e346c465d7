import CoreLocation
import Foundation
import UIKit
import UserNotifications

extension FuzzTarget {
    /// Every class that adopts `NSSecureCoding` in UserNotifications and UIKit's notification API.
    static let archivedClasses: [AnyClass] = [
        UNNotificationAction.self, UNTextInputNotificationAction.self, UNNotificationActionIcon.self,
        UNNotificationSound.self, UNNotification.self, UNNotificationContent.self, UNMutableNotificationContent.self,
        UNNotificationCategory.self, UNNotificationRequest.self, UNNotificationResponse.self,
        UNTextInputNotificationResponse.self, UNNotificationAttachment.self, UNNotificationSettings.self,
        UNTimeIntervalNotificationTrigger.self, UNCalendarNotificationTrigger.self, UNLocationNotificationTrigger.self,
        UILocalNotification.self, UIUserNotificationSettings.self, UIUserNotificationAction.self,
        UIMutableUserNotificationAction.self, UIUserNotificationCategory.self, UIMutableUserNotificationCategory.self,
        NSDictionary.self, NSArray.self, NSString.self, NSNumber.self, NSDate.self, NSData.self, NSSet.self,
    ]

    /// `NSKeyedArchiver` archives of every `UN*` and `UI*` class (N-28): decoded with secure coding, a damaged or
    /// foreign archive is `nil` or an error, never a crash.
    static let archives = FuzzTarget(
        name: "archives",
        summary: "NSSecureCoding archives of every UN* and UI* notification class",
        seeds: {
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
            let objects: [NSObject] = [
                UNNotificationAction(identifier: "a", title: "A", options: [.foreground]),
                UNTextInputNotificationAction(
                    identifier: "r", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "…"),
                UNNotificationSound.default, content, content.copy() as! UNNotificationContent,
                UNNotificationCategory(identifier: "c", actions: [], intentIdentifiers: [], options: [.customDismissAction]),
                UNNotificationRequest(
                    identifier: "r", content: content,
                    trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(hour: 8), repeats: true)),
                UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true),
                UNLocationNotificationTrigger(
                    region: CLCircularRegion(
                        center: CLLocationCoordinate2D(latitude: 31.2, longitude: 121.5), radius: 100, identifier: "office"),
                    repeats: false),
                local, action, category,
                UIUserNotificationSettings(types: [.alert, .badge], categories: [category]),
            ]
            var seeds: [[UInt8]] = []
            for object in objects {
                for format in [PropertyListSerialization.PropertyListFormat.binary, .xml] {
                    let archiver = NSKeyedArchiver(requiringSecureCoding: true)
                    archiver.outputFormat = format
                    archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
                    archiver.finishEncoding()
                    seeds.append([UInt8](archiver.encodedData))
                }
            }
            return seeds
        },
        run: { input in
            let data = Data(input)
            guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: data) else { return }
            unarchiver.requiresSecureCoding = true
            unarchiver.decodingFailurePolicy = .setErrorAndReturn
            let decoded = unarchiver.decodeObject(of: archivedClasses, forKey: NSKeyedArchiveRootObjectKey)
            unarchiver.finishDecoding()
            if let decoded = decoded as? NSObject {
                // A decoded object is a whole one: it can be described and copied (the classes that copy).
                _ = decoded.description
                if let copying = decoded as? any NSCopying { _ = copying.copy(with: nil) }
            }
        })
}
