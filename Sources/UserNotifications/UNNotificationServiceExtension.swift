import Foundation

/// Apple's `UNNotificationServiceExtension`: modifies a remote notification's content before it is shown.
///
/// Subclass it and override ``didReceive(_:withContentHandler:)``. The device daemon runs it for pushes with
/// `mutable-content: 1` and an alert (B-50), with about 30 seconds before ``serviceExtensionTimeWillExpire()``.
open class UNNotificationServiceExtension: NSObject {
    public override init() {
        super.init()
    }

    /// Receives the request; call `contentHandler` with the content to show. The default delivers it unchanged.
    open func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        contentHandler(request.content)
    }

    /// Called just before the time runs out: deliver your best attempt now, or the original content is shown (B-51).
    open func serviceExtensionTimeWillExpire() {}
}
