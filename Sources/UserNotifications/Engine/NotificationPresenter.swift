import Foundation

/// Shows delivered notifications to the person: a terminal line, a desktop notification, a test recorder.
public protocol NotificationPresenter: Sendable {
    /// Shows one notification.
    ///
    /// - Parameter presentation: What to show and how.
    func present(_ presentation: NotificationPresentation) async
}

/// A notification as a presenter shows it.
public struct NotificationPresentation: Sendable, Hashable {
    /// How the notification is shown, after the app's choice and the person's settings.
    public struct Style: Sendable, Hashable {
        /// Shown as a banner now.
        public var banner: Bool
        /// Kept in the Notification Center list.
        public var list: Bool
        /// A sound plays.
        public var sound: Bool
        /// The app's badge changes.
        public var badge: Bool

        public init(banner: Bool, list: Bool, sound: Bool, badge: Bool) {
            self.banner = banner
            self.list = list
            self.sound = sound
            self.badge = badge
        }
    }

    /// One of the category's actions, as a presenter offers it.
    public struct Action: Sendable, Hashable {
        /// The action's identifier: what the person's choice reports.
        public var identifier: String
        /// Its button title.
        public var title: String
        /// For a text-input action, the placeholder of its text field; `nil` for a button.
        public var textInputPlaceholder: String?

        public init(identifier: String, title: String, textInputPlaceholder: String? = nil) {
            self.identifier = identifier
            self.title = title
            self.textInputPlaceholder = textInputPlaceholder
        }
    }

    public var bundleIdentifier: String
    public var identifier: String
    public var title: String
    public var subtitle: String
    public var body: String
    /// The sound's name (`default` for the default sound), when a sound plays.
    public var soundName: String?
    /// The app's badge after this notification, when it changes it.
    public var badge: Int?
    public var categoryIdentifier: String
    public var threadIdentifier: String
    /// The titles of the category's actions, in display order.
    public var actionTitles: [String] { actions.map(\.title) }
    /// The category's actions, in display order.
    public var actions: [Action]
    /// Attachment file paths in the attachment data store.
    public var attachmentPaths: [String]
    public var date: Date
    public var style: Style
    /// Delivered while the app was not running (found in the delivered list at its next start).
    public var deliveredWhileNotRunning: Bool

    public init(
        bundleIdentifier: String, identifier: String, title: String, subtitle: String, body: String,
        soundName: String?, badge: Int?, categoryIdentifier: String, threadIdentifier: String,
        actions: [Action], attachmentPaths: [String], date: Date, style: Style, deliveredWhileNotRunning: Bool
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.soundName = soundName
        self.badge = badge
        self.categoryIdentifier = categoryIdentifier
        self.threadIdentifier = threadIdentifier
        self.actions = actions
        self.attachmentPaths = attachmentPaths
        self.date = date
        self.style = style
        self.deliveredWhileNotRunning = deliveredWhileNotRunning
    }
}

/// Writes one line per notification to a file handle (standard error by default).
public struct TerminalPresenter: NotificationPresenter {
    private let output: FileHandle

    /// Creates the presenter.
    ///
    /// - Parameter output: Where lines go.
    public init(output: FileHandle = .standardError) {
        self.output = output
    }

    public func present(_ presentation: NotificationPresentation) async {
        output.write(Data((TerminalPresenter.line(for: presentation) + "\n").utf8))
    }

    /// The line shown for a notification, e.g. `🔔 com.example.app  Title — Subtitle: Body  [sound: default]`.
    public static func line(for presentation: NotificationPresentation) -> String {
        var text = presentation.style.banner ? "🔔 " : "📥 "
        text += presentation.bundleIdentifier + "  "
        let heading = [presentation.title, presentation.subtitle].filter { !$0.isEmpty }.joined(separator: " — ")
        text += [heading, presentation.body].filter { !$0.isEmpty }.joined(separator: ": ")
        var details: [String] = []
        if let sound = presentation.soundName, presentation.style.sound { details.append("sound: \(sound)") }
        if let badge = presentation.badge, presentation.style.badge { details.append("badge: \(badge)") }
        if !presentation.actionTitles.isEmpty { details.append("actions: " + presentation.actionTitles.joined(separator: " | ")) }
        if !presentation.attachmentPaths.isEmpty { details.append("attachments: \(presentation.attachmentPaths.count)") }
        if !presentation.style.banner { details.append("quiet") }
        if presentation.deliveredWhileNotRunning { details.append("while app not running") }
        if !details.isEmpty { text += "  [" + details.joined(separator: ", ") + "]" }
        return text
    }
}

/// Shows each notification through every presenter it holds (the terminal and the desktop, say), in order.
public struct CompositePresenter: NotificationPresenter {
    private let presenters: [any NotificationPresenter]

    /// A presenter that shows through each of `presenters`.
    public init(_ presenters: [any NotificationPresenter]) {
        self.presenters = presenters
    }

    public func present(_ presentation: NotificationPresentation) async {
        for presenter in presenters { await presenter.present(presentation) }
    }
}
