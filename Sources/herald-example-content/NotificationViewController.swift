// The notification content extension of seed 003, ported to Swift against Herald: an image view and two labels that
// show the notification's image (its first attachment, else "push_image"), title and body; an action changes the
// content label, and the interface is dismissed 1.5 s later.
//
// An app declares it in its bundle: PlugIns/NotificationContent.appex/Info.plist with NSExtensionPointIdentifier
// com.apple.usernotifications.content-extension, NSExtensionAttributes → UNNotificationExtensionCategory category.test,
// and CFBundleExecutable herald-example-content. For Herald's tests, a payload key "test" changes its answer to an
// action: "keep" (doNotDismiss), "forward" (dismissAndForwardAction), "open" (extensionContext's
// performNotificationDefaultAction), "close" (dismissNotificationContentExtension); "buttons" replaces the actions shown.
import Foundation
import UIKit
import UserNotifications
import UserNotificationsUI

let kCategoryTestInputKey = "category.test.input"
let kCategoryTestConfirmKey = "category.test.confirm"

@main
class NotificationViewController: UIViewController, UNNotificationContentExtension {
    var imageView = UIImageView()
    var titleLabel = UILabel()
    var contentLabel = UILabel()
    var answer: UNNotificationContentExtensionResponseOption = .dismiss

    func didReceive(_ notification: UNNotification) {
        if notification.request.content.attachments.count == 0 {
            imageView.image = UIImage(named: "push_image")
        } else if let attachment = notification.request.content.attachments.first {
            if attachment.url.startAccessingSecurityScopedResource() {
                imageView.image = UIImage(contentsOfFile: attachment.url.path)
                attachment.url.stopAccessingSecurityScopedResource()
            }
        }
        titleLabel.text = notification.request.content.title
        contentLabel.text = notification.request.content.body
        switch notification.request.content.userInfo["test"] as? String {
        case "keep": answer = .doNotDismiss
        case "forward": answer = .dismissAndForwardAction
        case "values":
            // How this process reads the payload's values (issue 69), as JSONSerialization gives them on an iPhone.
            let info = notification.request.content.userInfo
            let u64max = (info["u64max"] as? UInt64).map { "\($0)" } ?? "-"
            contentLabel.text =
                "yes=\(info["yes"] as? Int ?? -1) no=\(info["no"] as? Int ?? -1) u64max=\(u64max) "
                + "nothing=\(info["nothing"] is NSNull ? "null" : "-") arr=\((info["arr"] as? [Any])?.count ?? -1)"
        case "buttons":
            extensionContext?.notificationActions = [
                UNNotificationAction(identifier: kCategoryTestConfirmKey, title: "OK!", options: [])
            ]
        default: answer = .dismiss
        }
    }

    func didReceive(
        _ response: UNNotificationResponse,
        completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void
    ) {
        if response.actionIdentifier == kCategoryTestInputKey, let inputResponse = response as? UNTextInputNotificationResponse {
            contentLabel.text = inputResponse.userText
        } else if response.actionIdentifier == kCategoryTestConfirmKey {
            contentLabel.text = "Confirm"
        }
        switch response.notification.request.content.userInfo["test"] as? String {
        case "open": extensionContext?.performNotificationDefaultAction()
        case "close": extensionContext?.dismissNotificationContentExtension()
        default:
            let answer = self.answer
            DispatchQueue.main.asyncAfter(deadline: .now() + 1.5) {
                completion(answer)
            }
        }
    }
}
