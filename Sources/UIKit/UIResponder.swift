import Foundation

/// Apple's `UIResponder`, as far as an app delegate needs it: the class `AppDelegate` subclasses
/// (`class AppDelegate: UIResponder, UIApplicationDelegate`). It has no events on Linux.
@MainActor
open class UIResponder: NSObject {
    /// Creates a responder. `required`, so that `@main` can make the app's delegate (``UIApplicationDelegate/main()``).
    public required override init() {
        super.init()
    }
}
