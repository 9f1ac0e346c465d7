import HeraldCore

/// What the device's parts signal when what they keep changes: the test-bed API's waits on the device watch them
/// (`herald up` makes them before its console and hands them to the device it assembles later).
package struct DeviceChanges: Sendable {
    /// A Live Activity started, changed or ended (``LiveActivityRegistry``).
    package var liveActivities = ChangeSignal()
    /// An app declared its widgets, a push asked for a reload, or an app sent its timelines (``WidgetRouter``).
    package var widgets = ChangeSignal()
    /// A push was handed to something other than Notification Center, or answered by it: a VoIP push to the app's
    /// `PKPushRegistry` (``VoIPPushRouter``), a web push message to its web app (``WebPushAgent``). Background pushes
    /// are the notification engine's, signalled by its own changes.
    package var appPushes = ChangeSignal()

    /// Signals of their own, which nobody watches until handed out.
    package init() {}
}
