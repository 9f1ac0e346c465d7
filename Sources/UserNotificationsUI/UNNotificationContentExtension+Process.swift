import Dispatch
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import UIKit
import UserNotifications

extension UNNotificationContentExtension where Self: UIViewController {
    /// The extension process's entry point when its controller is marked `@main`: the device daemon starts it for a
    /// notification of one of its categories, and for an action the person picks on one. The controller gets
    /// `viewDidLoad()`, then `didReceive(_:)` with the notification, then (for an action) `didReceive(_:completionHandler:)`;
    /// what it then shows, and the option it chose, go back to the daemon.
    ///
    /// The daemon names the request's file in `HERALD_CONTENT_EXTENSION_REQUEST`; the answer is one line of JSON on
    /// standard output. Started any other way, it says what it is and exits.
    @MainActor public static func main() {
        ContentExtensionProcess.run(Self())
    }
}

/// The content extension's side of its conversation with the daemon.
extension ContentExtensionProcess {
    @MainActor static func run(_ controller: some UIViewController & UNNotificationContentExtension) -> Never {
        guard let path = ProcessInfo.processInfo.environment[requestVariable],
            let data = FileManager.default.contents(atPath: path),
            let request = try? JSONDecoder().decode(Request.self, from: data)
        else {
            FileHandle.standardError.write(
                Data(
                    "This is a notification content extension: the Herald device daemon runs it (see \(requestVariable)).\n".utf8)
            )
            exit(64)
        }
        let notification = UNNotification(delivered: request.notification, context: .standalone)
        let context = NSExtensionContext()
        context.shownActions = request.actions.map(UNNotificationAction.make(record:))
        let box = UncheckedSendableBox(controller)
        // the controller may open the app or close its interface instead of answering.
        context.onRequest { asked in
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    var answer = Answer(rendering: render(box.value), option: nil)
                    answer.actions = changedActions(context, from: request.actions)
                    switch asked {
                    case .defaultAction: answer.defaultAction = true
                    case .dismiss: answer.option = UNNotificationContentExtensionResponseOption.dismiss.rawValue
                    }
                    finish(answer)
                }
            }
        }
        controller.extensionContext = context
        controller.viewDidLoad()
        controller.didReceive(notification)
        guard let action = request.actionIdentifier else {
            var answer = Answer(rendering: render(controller), option: nil)
            answer.actions = changedActions(context, from: request.actions)
            finish(answer)
            exit(0)
        }
        let response: UNNotificationResponse =
            request.userText.map {
                UNTextInputNotificationResponse(notification: notification, actionIdentifier: action, userText: $0)
            } ?? UNNotificationResponse(notification: notification, actionIdentifier: action)
        controller.heraldAnswer(response) { (option: UNNotificationContentExtensionResponseOption) -> Void in
            let rendering: ContentExtensionRendering = MainActor.assumeIsolated { render(box.value) }
            var answer = Answer(rendering: rendering, option: option.rawValue)
            answer.actions = changedActions(context, from: request.actions)
            finish(answer)
        }
        dispatchMain()
    }

    /// What `controller` shows: its title, its labels' text in declaration order, its first image view's image.
    @MainActor static func render(_ controller: UIViewController) -> ContentExtensionRendering {
        var texts: [String] = []
        var image: String?
        var mirror: Mirror? = Mirror(reflecting: controller)
        var levels: [Mirror] = []
        while let current = mirror {
            levels.insert(current, at: 0)  // superclass properties first, as they are declared
            mirror = current.superclassMirror
        }
        for level in levels {
            for child in level.children {
                let value = Self.unwrap(child.value)
                if let label = value as? UILabel, let text = label.text, !text.isEmpty { texts.append(text) }
                if image == nil, let view = value as? UIImageView { image = view.image?.path }
            }
        }
        return ContentExtensionRendering(title: controller.title, texts: texts, imagePath: image)
    }

    /// A property's value, looking through `Optional` (outlets are optional).
    private static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value
    }

    /// The actions the extension shows now, when they are not the category's.
    private static func changedActions(
        _ context: NSExtensionContext, from original: [NotificationActionRecord]
    )
        -> [NotificationActionRecord]?
    {
        let now = context.shownActions.map(\.record)
        return now == original ? nil : now
    }

    /// Writes the answer and ends the process.
    private static func finish(_ answer: Answer) {
        let line = (try? JSONEncoder().encode(answer)) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(line + Data("\n".utf8))
        exit(0)
    }
}
