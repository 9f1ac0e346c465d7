import Foundation
import UserNotifications

/// Apple's `UIViewController`, as far as a notification content extension draws with it.
///
/// Herald has no views on screen. A content extension's controller shows what it holds — its `title`, the text of its
/// `UILabel` properties (in the order they are declared) and the image of its first `UIImageView` property — and the
/// device's presenters show that: the terminal as lines, the desktop as the notification's body and image.
@MainActor
open class UIViewController: UIResponder {
    /// The controller's title: shown as the notification's title when the extension declares
    /// `UNNotificationExtensionOverridesDefaultTitle`.
    open var title: String?
    /// The size the controller would like (kept for source compatibility; nothing is laid out).
    open var preferredContentSize: CGSize = .zero
    /// The extension context, for a controller that is an app extension's principal object.
    public package(set) var extensionContext: NSExtensionContext?

    public required init() {
        super.init()
    }

    /// Called once, before the controller gets its first notification.
    open func viewDidLoad() {}
}

/// Apple's `UILabel`: a line of text a content extension shows.
@MainActor
open class UILabel: UIResponder {
    /// The text shown.
    open var text: String?

    public required init() {
        super.init()
    }
}

/// Apple's `UIImageView`: the image a content extension shows.
@MainActor
open class UIImageView: UIResponder {
    /// The image shown.
    open var image: UIImage?

    public required init() {
        super.init()
    }
}

/// Apple's `UIImage`, as a content extension names one: a file.
public final class UIImage: NSObject, Sendable {
    /// The image's file.
    public let path: String

    /// The image in the file at `path`; `nil` when there is no such file.
    public init?(contentsOfFile path: String) {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        self.path = path
    }

    /// The image called `name` in the main bundle (`name`, or `name.png`); `nil` when there is none.
    public convenience init?(named name: String) {
        let folder = URL(fileURLWithPath: ProcessInfo.processInfo.environment["HERALD_BUNDLE_PATH"] ?? Bundle.main.bundlePath)
        let candidates = [name, name + ".png"].map { folder.appendingPathComponent($0).path }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else { return nil }
        self.init(contentsOfFile: found)
    }
}

/// Foundation's `NSExtensionContext` (Linux's Foundation has none): the context an app extension runs in. A notification
/// content extension's controller has one (`extensionContext`); UserNotificationsUI adds the notification calls.
open class NSExtensionContext: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var actions: [UNNotificationAction] = []
    private var finish: (@Sendable (ExtensionRequest) -> Void)?

    /// What a content extension asked of the system.
    package enum ExtensionRequest: Sendable {
        /// `performNotificationDefaultAction()`: open the app as a tap would.
        case defaultAction
        /// `dismissNotificationContentExtension()`.
        case dismiss
    }

    public override init() {
        super.init()
    }

    /// The actions shown with the notification (a content extension may replace them).
    package var shownActions: [UNNotificationAction] {
        get { lock.withLock { actions } }
        set { lock.withLock { actions = newValue } }
    }

    /// Where the extension's requests go (the process that runs it).
    package func onRequest(_ handler: @escaping @Sendable (ExtensionRequest) -> Void) {
        lock.withLock { finish = handler }
    }

    /// Passes a request of the extension on.
    package func request(_ request: ExtensionRequest) {
        lock.withLock { finish }?(request)
    }
}
