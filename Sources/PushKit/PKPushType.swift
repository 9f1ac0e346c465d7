/// A kind of PushKit push.
public struct PKPushType: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// VoIP calls (topic `<bundle>.voip`).
    public static let voIP = PKPushType(rawValue: "PKPushTypeVoIP")
    /// File Provider changes (topic `<bundle>.pushkit.fileprovider`); Herald's device does not deliver these.
    public static let fileProvider = PKPushType(rawValue: "PKPushTypeFileProvider")
    /// watchOS complications (topic `<bundle>.complication`); Herald's device does not deliver these.
    public static let complication = PKPushType(rawValue: "PKPushTypeComplication")
}
