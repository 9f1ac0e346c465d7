@_exported import UserNotifications

/// Apple's `UNNotificationContentExtensionMediaPlayPauseButtonType`.
public enum UNNotificationContentExtensionMediaPlayPauseButtonType: UInt, Sendable, Hashable {
    case none = 0
    case `default` = 1
    case overlay = 2
}

/// Apple's `UNNotificationContentExtensionResponseOption`: what happens after a content extension handles an action.
public enum UNNotificationContentExtensionResponseOption: UInt, Sendable, Hashable {
    /// Keep the notification interface on screen.
    case doNotDismiss = 0
    /// Dismiss the interface.
    case dismiss = 1
    /// Dismiss it and pass the action on to the app's delegate.
    case dismissAndForwardAction = 2
}

/// Apple's `UNNotificationContentExtension`: a custom interface for notifications of the categories an extension
/// declares (`UNNotificationExtensionCategory`, B-60).
///
/// Optional requirements have default implementations with Apple's "not implemented" behaviour: no
/// `didReceive(_:completionHandler:)` means actions go to the app, no media button. The media button's
/// tint colour is not part of Herald's protocol: there is no UIKit on Linux.
public protocol UNNotificationContentExtension: NSObjectProtocol {
    /// A notification for one of the extension's categories arrived, or a new one in the same thread.
    @MainActor func didReceive(_ notification: UNNotification)

    /// The person picked an action while the interface is shown.
    @MainActor func didReceive(
        _ response: UNNotificationResponse,
        completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void
    )

    /// The `async` form of ``didReceive(_:completionHandler:)``.
    @MainActor func didReceive(_ response: UNNotificationResponse) async -> UNNotificationContentExtensionResponseOption

    /// The media button to draw.
    var mediaPlayPauseButtonType: UNNotificationContentExtensionMediaPlayPauseButtonType { get }

    /// Where the media button goes, in the interface's coordinates; no frame, no button.
    var mediaPlayPauseButtonFrame: CGRect { get }

    /// The person tapped play.
    func mediaPlay()

    /// The person tapped pause.
    func mediaPause()
}

extension UNNotificationContentExtension {
    @MainActor public func didReceive(
        _ response: UNNotificationResponse,
        completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void
    ) {
        let call = ExtensionCall(extensionObject: self, response: response, completion: completion)
        Task { @MainActor in
            call.completion(await call.extensionObject.didReceive(call.response))
        }
    }

    @MainActor public func didReceive(_ response: UNNotificationResponse) async -> UNNotificationContentExtensionResponseOption {
        .dismissAndForwardAction
    }

    /// Calls the requirement (the extension's own method when it has one), for the process that runs the extension.
    @MainActor func heraldAnswer(
        _ response: UNNotificationResponse, _ completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void
    ) {
        self.didReceive(response, completionHandler: completion)
    }

    public var mediaPlayPauseButtonType: UNNotificationContentExtensionMediaPlayPauseButtonType { .none }
    public var mediaPlayPauseButtonFrame: CGRect { .zero }
    public func mediaPlay() {}
    public func mediaPause() {}
}

/// One call of the default `didReceive(_:completionHandler:)`, carried to the task that runs the `async` form.
///
/// A class rather than a generic tuple box: the parameters arrive at +0 and must be retained explicitly.
private final class ExtensionCall: @unchecked Sendable {
    let extensionObject: any UNNotificationContentExtension
    let response: UNNotificationResponse
    let completion: (UNNotificationContentExtensionResponseOption) -> Void

    init(
        extensionObject: any UNNotificationContentExtension, response: UNNotificationResponse,
        completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void
    ) {
        self.extensionObject = extensionObject
        self.response = response
        self.completion = completion
    }
}
