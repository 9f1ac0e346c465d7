/// What a notification service extension process and the device daemon say to each other: a file in, a line out, a
/// signal for the deadline.
///
/// The extension's side (`UNNotificationServiceExtension.main()`) is in `UserNotifications`; the daemon's is
/// `ServiceExtensionHost`.
public enum ServiceExtensionProcess {
    public static let requestVariable = "HERALD_SERVICE_EXTENSION_REQUEST"
    /// What the extension writes once it can take `SIGUSR1`.
    public static let readyLine = #"{"ready":true}"# + "\n"

    /// What the extension answers: the content to show, or why there is none.
    public struct Answer: Codable, Sendable {
        public var content: NotificationContentRecord?
        public var error: String?

        public init(content: NotificationContentRecord? = nil, error: String? = nil) {
            self.content = content
            self.error = error
        }
    }

    /// Set to `1` for a warm extension: requests come one per line on standard input, answers go one per line to
    /// standard output, and the process stays for the next push.
    public static let warmVariable = "HERALD_SERVICE_EXTENSION_WARM"
}
