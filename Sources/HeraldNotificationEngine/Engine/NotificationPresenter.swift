import Foundation
import HeraldCore
import HeraldDeviceProtocol

/// Shows delivered notifications to the person: a terminal line, a desktop notification, a test recorder.
public protocol NotificationPresenter: Sendable {
    /// Shows one notification.
    ///
    /// - Parameter presentation: What to show and how.
    func present(_ presentation: NotificationPresentation) async

    /// Shows a Live Activity as it is now, in place of what was shown for it before (a presenter that shows no Live
    /// Activities does nothing).
    ///
    /// - Parameter activity: The activity and what changed.
    func presentLiveActivity(_ activity: LiveActivityPresentation) async
}

extension NotificationPresenter {
    public func presentLiveActivity(_ activity: LiveActivityPresentation) async {}
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
    /// Why the person sees it only now, when it waited: a Focus held it, or the scheduled summary did (it was in the
    /// delivered list all along); `nil` when shown as it came.
    public var heldFor: Hold?

    /// What held a notification back from the person (``heldFor``).
    public enum Hold: String, Sendable, Hashable {
        /// A Focus was on and did not let it through: shown, quietly, when the Focus ended.
        case focus
        /// The app's notifications go to the scheduled summary: shown, quietly, at its time.
        case summary
    }

    /// The delivered notification itself (for a content extension to render).
    var notification: DeliveredNotification?

    init(
        notification: DeliveredNotification?, bundleIdentifier: String, identifier: String, title: String,
        subtitle: String, body: String, soundName: String?, badge: Int?, categoryIdentifier: String,
        threadIdentifier: String, actions: [Action], attachmentPaths: [String], date: Date, style: Style,
        deliveredWhileNotRunning: Bool
    ) {
        self.init(
            bundleIdentifier: bundleIdentifier, identifier: identifier, title: title, subtitle: subtitle, body: body,
            soundName: soundName, badge: badge, categoryIdentifier: categoryIdentifier, threadIdentifier: threadIdentifier,
            actions: actions, attachmentPaths: attachmentPaths, date: date, style: style,
            deliveredWhileNotRunning: deliveredWhileNotRunning)
        self.notification = notification
    }

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

    public func presentLiveActivity(_ activity: LiveActivityPresentation) async {
        output.write(Data((TerminalPresenter.line(for: activity) + "\n").utf8))
    }

    /// The line shown for a Live Activity each time it changes — its text from the sender, control characters
    /// escaped (`String/escapingControlCharacters`) — e.g.
    /// `⏱ com.example.app  Live Activity 1F2E… (ScoreAttributes) active: score: 3, team: Lions  [alert: Goal! — 3:2]`.
    public static func line(for activity: LiveActivityPresentation) -> String {
        var text = "⏱ \(activity.bundleIdentifier)  Live Activity \(activity.activityID.prefix(8))… (\(activity.attributesType)) "
        text += activity.state + ": " + activity.contentSummary.replacingOccurrences(of: "\n", with: " / ")
        if activity.alertTitle != nil || activity.alertBody != nil {
            let alert = [activity.alertTitle, activity.alertBody].compactMap { $0 }.filter { !$0.isEmpty }.joined(
                separator: " — ")
            text += "  [alert: " + alert.replacingOccurrences(of: "\n", with: " / ")
            if let sound = activity.alertSound { text += ", sound: \(sound)" }
            text += "]"
        }
        return text.escapingControlCharacters
    }

    /// The line shown for a notification — its text from the sender, control characters escaped
    /// (`String/escapingControlCharacters`: an ESC or CR in a title can neither retitle the terminal nor rewrite a
    /// line) — e.g. `🔔 com.example.app  Title — Subtitle: Body  [sound: default]`.
    public static func line(for presentation: NotificationPresentation) -> String {
        var text = presentation.style.banner ? "🔔 " : "📥 "
        text += presentation.bundleIdentifier + "  "
        let heading = [presentation.title, presentation.subtitle].filter { !$0.isEmpty }.joined(separator: " — ")
        text += [heading, presentation.body].filter { !$0.isEmpty }.joined(separator: ": ")
            .replacingOccurrences(of: "\n", with: " / ")  // one line per notification
        var details: [String] = []
        if let sound = presentation.soundName, presentation.style.sound { details.append("sound: \(sound)") }
        if let badge = presentation.badge, presentation.style.badge { details.append("badge: \(badge)") }
        if !presentation.actionTitles.isEmpty { details.append("actions: " + presentation.actionTitles.joined(separator: " | ")) }
        if !presentation.attachmentPaths.isEmpty { details.append("attachments: \(presentation.attachmentPaths.count)") }
        if !presentation.style.banner { details.append("quiet") }
        if presentation.deliveredWhileNotRunning { details.append("while app not running") }
        switch presentation.heldFor {
        case .focus?: details.append("held by Focus")
        case .summary?: details.append("scheduled summary")
        case nil: break
        }
        if !details.isEmpty { text += "  [" + details.joined(separator: ", ") + "]" }
        return text.escapingControlCharacters
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

    public func presentLiveActivity(_ activity: LiveActivityPresentation) async {
        for presenter in presenters { await presenter.presentLiveActivity(activity) }
    }
}

/// An app's notification content extension as the engine consults it: what it shows for a notification of its
/// categories (B-60), and what it decides when the person picks an action on one (seed 003).
/// Apps' notification service extensions, as the engine runs them on the pushes it holds for them (B-50…B-52): the
/// device daemon's `ServiceExtensionHost`.
package protocol ServiceExtensions: Sendable {
    /// Runs `claim`'s extension on `request` within its time; the content it gave, or `nil` when it crashed, hung or
    /// gave none (the push is then shown as it came).
    func modify(
        _ request: NotificationRequestRecord, with claim: ServiceExtensionClaim, for bundleIdentifier: String
    ) async
        -> NotificationContentRecord?
}

/// The service extension that modifies a push: the app's `.appex` folder and the executable to run.
package struct ServiceExtensionClaim: Sendable, Hashable {
    package var bundle: URL
    package var executable: URL

    package init(bundle: URL, executable: URL) {
        self.bundle = bundle
        self.executable = executable
    }
}

package protocol ContentExtensions: Sendable {
    /// What the app's content extension shows for `notification`; `nil` when no extension of the app claims its
    /// category (or it failed).
    func appearance(
        of notification: DeliveredNotification, actions: [NotificationActionRecord], bundlePath: String,
        for bundleIdentifier: String
    ) async -> ContentExtensionAppearance?

    /// The extension's decision on an action the person picked; `nil` when no extension claims the category (or it
    /// failed): the action goes to the app as usual.
    func decision(
        on notification: DeliveredNotification, actions: [NotificationActionRecord], actionIdentifier: String,
        userText: String?, bundlePath: String, for bundleIdentifier: String
    ) async -> ContentExtensionDecision?
}

/// What a content extension shows, and how (its `NSExtensionAttributes`).
package struct ContentExtensionAppearance: Sendable, Hashable {
    var rendering: ContentExtensionRendering
    /// `UNNotificationExtensionDefaultContentHidden`: only the extension's content is shown.
    var defaultContentHidden: Bool
    /// `UNNotificationExtensionOverridesDefaultTitle`: the controller's title replaces the notification's.
    var overridesDefaultTitle: Bool
    /// The actions the extension shows instead of the category's (`extensionContext.notificationActions`, X-16).
    var actions: [NotificationActionRecord]?

    package init(
        rendering: ContentExtensionRendering, defaultContentHidden: Bool, overridesDefaultTitle: Bool,
        actions: [NotificationActionRecord]? = nil
    ) {
        self.rendering = rendering
        self.defaultContentHidden = defaultContentHidden
        self.overridesDefaultTitle = overridesDefaultTitle
        self.actions = actions
    }

    /// `presentation` as it looks with the extension's content.
    func applied(to presentation: NotificationPresentation) -> NotificationPresentation {
        var shown = presentation
        if overridesDefaultTitle, let title = rendering.title { shown.title = title }
        let custom = rendering.texts.joined(separator: "\n")
        if defaultContentHidden {
            shown.subtitle = ""
            shown.body = custom
        } else if !custom.isEmpty {
            shown.body = [presentation.body, custom].filter { !$0.isEmpty }.joined(separator: "\n")
        }
        if let image = rendering.imagePath {
            shown.attachmentPaths = [image] + presentation.attachmentPaths.filter { $0 != image }
        }
        if let actions {
            shown.actions = actions.map {
                NotificationPresentation.Action(
                    identifier: $0.identifier, title: $0.title, textInputPlaceholder: $0.textInput?.placeholder)
            }
        }
        return shown
    }
}

/// A presenter that shows nothing (`HERALD_PRESENTER=none`).
package struct SilentPresenter: NotificationPresenter {
    package init() {}
    package func present(_ presentation: NotificationPresentation) async {}
}
