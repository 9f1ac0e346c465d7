/// The alert an update of a Live Activity comes with.
///
/// Apple's initializer takes `LocalizedStringResource`s, which Foundation on Linux does not have: here they are the
/// strings themselves (a string literal reads the same at the call site).
public struct AlertConfiguration: Sendable, Hashable {
    /// The sound the alert plays.
    public struct AlertSound: Sendable, Hashable {
        let name: String

        /// The system's sound.
        public static let `default` = AlertSound(name: "default")

        /// A sound file of the app's.
        public static func named(_ name: String) -> AlertSound {
            AlertSound(name: name)
        }
    }

    public let title: String
    public let body: String
    public let sound: AlertSound

    public init(title: String, body: String, sound: AlertSound) {
        self.title = title
        self.body = body
        self.sound = sound
    }
}
