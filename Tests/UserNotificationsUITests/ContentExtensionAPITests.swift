import Foundation
import Testing
import UIKit
import UserNotifications
import UserNotificationsUI

/// Apple's content-extension API as Herald mirrors it (X-13…X-15): raw values and the defaults of the optional parts.
@Suite struct ContentExtensionAPITests {
    @MainActor final class Minimal: NSObject, UNNotificationContentExtension {
        var received: [String] = []
        func didReceive(_ notification: UNNotification) {
            received.append(notification.request.identifier)
        }
    }

    @Test("X-14: UNNotificationContentExtensionMediaPlayPauseButtonType — none 0, default 1, overlay 2")
    func mediaButtonTypes() {
        #expect(UNNotificationContentExtensionMediaPlayPauseButtonType.none.rawValue == 0)
        #expect(UNNotificationContentExtensionMediaPlayPauseButtonType.default.rawValue == 1)
        #expect(UNNotificationContentExtensionMediaPlayPauseButtonType.overlay.rawValue == 2)
    }

    @Test("X-15: UNNotificationContentExtensionResponseOption — doNotDismiss 0, dismiss 1, dismissAndForwardAction 2")
    func responseOptions() {
        #expect(UNNotificationContentExtensionResponseOption.doNotDismiss.rawValue == 0)
        #expect(UNNotificationContentExtensionResponseOption.dismiss.rawValue == 1)
        #expect(UNNotificationContentExtensionResponseOption.dismissAndForwardAction.rawValue == 2)
        #expect(UNNotificationContentExtensionResponseOption(rawValue: 3) == nil)
    }

    @Test("X-13: an extension that implements only didReceive(_:) has no media button (none, no frame)")
    @MainActor func optionalPartsDefaults() {
        let controller = Minimal()
        #expect(controller.mediaPlayPauseButtonType == .none)
        #expect(controller.mediaPlayPauseButtonFrame == .zero)
    }
}
