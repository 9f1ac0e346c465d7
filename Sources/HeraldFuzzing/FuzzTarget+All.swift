extension FuzzTarget {
    /// Every target, by name.
    public static let all: [FuzzTarget] = [
        .providerHeaders, .payloadJSON, .providerToken, .deviceChannel, .appChannel, .dbus, .apnsFile, .strings,
        .archives, .http2Frames, .apnsAnswers, .fcmSend, .oauthGrant, .webPushVAPID, .webPushBody, .mozillaPush,
    ]

    /// The target with this name.
    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}
