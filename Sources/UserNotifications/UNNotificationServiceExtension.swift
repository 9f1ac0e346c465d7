import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationServiceExtension`: modifies a remote notification's content before it is shown.
///
/// Subclass it and override ``didReceive(_:withContentHandler:)``. The device daemon runs it for pushes with
/// `mutable-content: 1` and an alert (B-50), with about 30 seconds before ``serviceExtensionTimeWillExpire()``.
///
/// On Herald an extension is an executable of its own: mark the subclass `@main` (``main()`` runs it), and declare it
/// in the app's bundle as `PlugIns/<Name>.appex/Info.plist` with `NSExtension.NSExtensionPointIdentifier`
/// `com.apple.usernotifications.service` and `CFBundleExecutable` (the executable's name, looked for in the `.appex`
/// folder, then beside the app).
open class UNNotificationServiceExtension: NSObject {
    /// Creates the extension. `required`, so that ``main()`` can make the `@main` subclass.
    public required override init() {
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
