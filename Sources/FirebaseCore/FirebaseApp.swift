import Foundation

/// The Firebase app of the process: `FirebaseApp.configure()` once at launch, as on iOS.
open class FirebaseApp: NSObject {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var configured: FirebaseApp?

    /// The app's name (`__FIRAPP_DEFAULT` for the default app).
    open var name: String { "__FIRAPP_DEFAULT" }
    /// Its options.
    open var options: FirebaseOptions { storedOptions }
    private let storedOptions: FirebaseOptions

    private init(options: FirebaseOptions) {
        self.storedOptions = options
        super.init()
    }

    /// Configures the default app from ``FirebaseOptions/defaultOptions()``.
    open class func configure() {
        guard let options = FirebaseOptions.defaultOptions() else { return }
        configure(options: options)
    }

    /// Configures the default app with `options` (again: replaces it, where iOS would stop the process).
    ///
    /// - Parameter options: The app's options.
    open class func configure(options: FirebaseOptions) {
        let app = FirebaseApp(options: options)
        lock.withLock { configured = app }
    }

    /// The default app, once configured.
    open class func app() -> FirebaseApp? {
        lock.withLock { configured }
    }
}
