import Foundation
import HeraldTesting
import Testing
import UserNotifications
import UserNotificationsUI

/// Apple's names and raw values (research §1.10, §1.11, N-26, N-27, X-14, X-15).
@Suite struct APISurfaceTests {
    @Test func authorizationOptionRawValues() {
        #expect(UNAuthorizationOptions.badge.rawValue == 1)
        #expect(UNAuthorizationOptions.sound.rawValue == 2)
        #expect(UNAuthorizationOptions.alert.rawValue == 4)
        #expect(UNAuthorizationOptions.carPlay.rawValue == 8)
        #expect(UNAuthorizationOptions.criticalAlert.rawValue == 16)
        #expect(UNAuthorizationOptions.providesAppNotificationSettings.rawValue == 32)
        #expect(UNAuthorizationOptions.provisional.rawValue == 64)
    }

    @Test func enumRawValues() {
        #expect(UNAuthorizationStatus.notDetermined.rawValue == 0)
        #expect(UNAuthorizationStatus.denied.rawValue == 1)
        #expect(UNAuthorizationStatus.authorized.rawValue == 2)
        #expect(UNAuthorizationStatus.provisional.rawValue == 3)
        #expect(UNAuthorizationStatus.ephemeral.rawValue == 4)
        #expect(UNNotificationSetting.notSupported.rawValue == 0)
        #expect(UNNotificationSetting.disabled.rawValue == 1)
        #expect(UNNotificationSetting.enabled.rawValue == 2)
        #expect(UNAlertStyle.none.rawValue == 0 && UNAlertStyle.banner.rawValue == 1 && UNAlertStyle.alert.rawValue == 2)
        #expect(UNShowPreviewsSetting.always.rawValue == 0 && UNShowPreviewsSetting.never.rawValue == 2)
        #expect(UNNotificationPresentationOptions.badge.rawValue == 1)
        #expect(UNNotificationPresentationOptions.sound.rawValue == 2)
        #expect(UNNotificationPresentationOptions.list.rawValue == 8)
        #expect(UNNotificationPresentationOptions.banner.rawValue == 16)
        #expect(UNNotificationInterruptionLevel.passive.rawValue == 0)
        #expect(UNNotificationInterruptionLevel.critical.rawValue == 3)
        #expect(UNNotificationActionOptions.authenticationRequired.rawValue == 1)
        #expect(UNNotificationActionOptions.destructive.rawValue == 2)
        #expect(UNNotificationActionOptions.foreground.rawValue == 4)
        #expect(UNNotificationCategoryOptions.customDismissAction.rawValue == 1)
        #expect(UNNotificationCategoryOptions.allowInCarPlay.rawValue == 2)
        #expect(UNNotificationCategoryOptions.hiddenPreviewsShowTitle.rawValue == 4)
        #expect(UNNotificationCategoryOptions.hiddenPreviewsShowSubtitle.rawValue == 8)
        #expect(UNNotificationContentExtensionMediaPlayPauseButtonType.overlay.rawValue == 2)
        #expect(UNNotificationContentExtensionResponseOption.doNotDismiss.rawValue == 0)
        #expect(UNNotificationContentExtensionResponseOption.dismissAndForwardAction.rawValue == 2)
    }

    @Test("N-26, N-27: action identifier constants")
    func actionIdentifierConstants() {
        #expect(UNNotificationDefaultActionIdentifier == "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(UNNotificationDismissActionIdentifier == "com.apple.UNNotificationDismissActionIdentifier")
    }

    @Test("§1.11: UNError codes, domain and catch patterns")
    func errorCodes() throws {
        #expect(UNErrorDomain == "UNErrorDomain")
        let codes: [(UNError.Code, Int)] = [
            (.notificationsNotAllowed, 1), (.attachmentInvalidURL, 100), (.attachmentUnrecognizedType, 101),
            (.attachmentInvalidFileSize, 102), (.attachmentNotInDataStore, 103), (.attachmentMoveIntoDataStoreFailed, 104),
            (.attachmentCorrupt, 105), (.notificationInvalidNoDate, 1400), (.notificationInvalidNoContent, 1401),
            (.contentProvidingObjectNotAllowed, 1500), (.contentProvidingInvalid, 1501), (.badgeInputInvalid, 1600),
        ]
        for (code, raw) in codes { #expect(code.rawValue == raw) }
        let error: any Error = UNError(.notificationsNotAllowed)
        #expect((error as NSError).domain == "UNErrorDomain")
        #expect((error as NSError).code == 1)
        do {
            throw UNError(.badgeInputInvalid)
        } catch UNError.badgeInputInvalid {
            // matched by Apple's pattern
        } catch {
            Issue.record("UNError.badgeInputInvalid pattern did not match \(error)")
        }
    }

    @Test("N-1…N-17: defaults of fresh mutable content")
    func contentDefaults() {
        let content = UNMutableNotificationContent()
        #expect(content.title == "" && content.subtitle == "" && content.body == "")
        #expect(content.badge == nil && content.sound == nil)
        #expect(content.userInfo.isEmpty && content.attachments.isEmpty)
        #expect(content.categoryIdentifier == "" && content.threadIdentifier == "")
        #expect(content.targetContentIdentifier == nil)
        #expect(content.interruptionLevel == .active)
        #expect(content.relevanceScore == 0)
        #expect(content.filterCriteria == nil)
    }

    @Test("mutableCopy() of content yields UNMutableNotificationContent; copy() yields immutable content")
    func mutableCopy() {
        let content = makeContent("Title")
        content.userInfo = ["msgid": 7]
        let immutable = content.copy() as! UNNotificationContent
        #expect(!(immutable is UNMutableNotificationContent))
        let mutable = immutable.mutableCopy() as? UNMutableNotificationContent
        #expect(mutable != nil)
        mutable?.title = "Changed"
        #expect(immutable.title == "Title")
        #expect((mutable?.userInfo["msgid"] as? Int) == 7)
    }

    @Test("N-21: a request copies its content; later changes don't reach it")
    func requestCopiesContent() {
        let content = makeContent("Before")
        let request = UNNotificationRequest(identifier: "a", content: content, trigger: nil)
        content.title = "After"
        #expect(request.content.title == "Before")
    }

    @Test("N-28: model classes archive and unarchive")
    func archiving() throws {
        let content = makeContent("Archived")
        content.badge = 3
        content.userInfo = ["id": 123, "nested": ["k": "v"]]
        content.sound = .default
        let request = UNNotificationRequest(
            identifier: "x", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        )
        let data = try NSKeyedArchiver.archivedData(withRootObject: request, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: UNNotificationRequest.self, from: data))
        #expect(decoded.identifier == "x")
        #expect(decoded.content.title == "Archived")
        #expect(decoded.content.badge == 3)
        #expect((decoded.content.userInfo["id"] as? Int) == 123)
        #expect((decoded.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 60)
        #expect(decoded.trigger?.repeats == true)
        #expect(decoded.isEqual(request))
    }

    @Test("N-30…N-38: sounds")
    func sounds() {
        let named = UNNotificationSound(named: UNNotificationSoundName("ping.aiff"))
        #expect(named.isEqual(UNNotificationSound(named: "ping.aiff")))
        #expect(!named.isEqual(UNNotificationSound.default))
        #expect(UNNotificationSound.default.isEqual(UNNotificationSound.default))
        _ = UNNotificationSound.defaultCritical
        _ = UNNotificationSound.defaultCriticalSound(withAudioVolume: 0.5)
        _ = UNNotificationSound.criticalSoundNamed(UNNotificationSoundName(rawValue: "alarm.caf"), withAudioVolume: 2)
        _ = UNNotificationSound.ringtoneSoundNamed("ring.caf")
        _ = UNNotificationSound.defaultRingtone
    }

    @Test("N-50…N-55: actions and categories keep their values")
    func actionsAndCategories() {
        let input = UNTextInputNotificationAction(
            identifier: "input", title: "Input", options: .foreground, textInputButtonTitle: "Send",
            textInputPlaceholder: "Say something"
        )
        let icon = UNNotificationActionIcon(systemImageName: "trash")
        let delete = UNNotificationAction(identifier: "delete", title: "Delete", options: [.destructive], icon: icon)
        let category = UNNotificationCategory(
            identifier: "c", actions: [input, delete], intentIdentifiers: [],
            hiddenPreviewsBodyPlaceholder: "%u new", categorySummaryFormat: "%u more", options: .customDismissAction
        )
        #expect(category.actions.map(\.identifier) == ["input", "delete"])
        #expect((category.actions[0] as? UNTextInputNotificationAction)?.textInputPlaceholder == "Say something")
        #expect(category.actions[1].options == .destructive)
        #expect(category.actions[1].icon != nil)
        #expect(category.options == .customDismissAction)
        #expect(category.hiddenPreviewsBodyPlaceholder == "%u new")
        #expect(category.categorySummaryFormat == "%u more")
        let plain = UNNotificationCategory(identifier: "p", actions: [], intentIdentifiers: [])
        #expect(plain.options == [] && plain.hiddenPreviewsBodyPlaceholder == "")
    }

    @Test("N-17: content providers from outside Apple's SDK are refused")
    func contentProviding() {
        final class Provider: NSObject, UNNotificationContentProviding {}
        #expect(throws: UNError.self) { try makeContent("x").updating(from: Provider()) }
    }

    @Test("testing kit builds settings and responses (no public initializers in Apple's API)")
    func testingBuilders() {
        let settings = UNNotificationSettings.testing(authorizationStatus: .authorized, soundSetting: .disabled)
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.alertSetting == .enabled && settings.soundSetting == .disabled)
        let notification = UNNotification.testing(identifier: "n", content: makeContent("t"))
        let response = UNTextInputNotificationResponse.testing(
            notification: notification, actionIdentifier: "reply", userText: "hi")
        #expect(response.userText == "hi" && response.notification.request.identifier == "n")
    }

    @Test("NSString.localizedUserNotificationString substitutes arguments")
    func localizedString() {
        #expect(
            NSString.localizedUserNotificationString(forKey: "Hello %@, %d new", arguments: ["Ann", 3]) == "Hello Ann, 3 new")
        #expect(NSString.localizedUserNotificationString(forKey: "plain", arguments: nil) == "plain")
    }
}
