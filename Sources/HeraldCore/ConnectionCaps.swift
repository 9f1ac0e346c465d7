/// How many connections each of a Herald process's ports may hold at once: shares of its open-file limit, so that the
/// ports together can never use up the process's descriptors. A port at its cap stops accepting (the kernel holds what
/// comes next in the listen backlog) until one of its connections closes; the other ports, the provider API and the
/// console among them, keep their own room whatever one port is sent.
public struct ConnectionCaps: Sendable, Equatable {
    /// The device port: the device channel, Firefox's WebSocket and the web push service.
    public var devices: Int
    /// Each provider API listener (the APNs door).
    public var provider: Int
    /// The FCM port.
    public var fcm: Int
    /// The console and its test-bed API.
    public var console: Int

    /// Caps given one by one.
    ///
    /// - Parameters:
    ///   - devices: The device port's.
    ///   - provider: Each provider API listener's.
    ///   - fcm: The FCM port's.
    ///   - console: The console's.
    public init(devices: Int, provider: Int, fcm: Int, console: Int) {
        self.devices = devices
        self.provider = provider
        self.fcm = fcm
        self.console = console
    }

    /// The shares of `openFileLimit`: a twentieth (at least 256) kept for the process's own files and clients, and of
    /// the rest an eighth for the console (2,048 at most: the test-bed API holds up to 1,000 waits), an eighth for the FCM port, an eighth for each provider listener, and what
    /// is left for the devices.
    ///
    /// - Parameters:
    ///   - openFileLimit: The process's limit on open descriptors (``OpenFileLimit``).
    ///   - providerListeners: How many provider API listeners the process has.
    public init(openFileLimit: Int, providerListeners: Int) {
        let usable = max(64, openFileLimit - max(256, openFileLimit / 20))
        console = max(16, min(2_048, usable / 8))
        fcm = max(16, usable / 8)
        provider = max(16, usable / 8)
        devices = max(16, usable - console - fcm - provider * max(0, providerListeners))
    }

    /// The shares of this process's open-file limit (see ``init(openFileLimit:providerListeners:)``); a limit of
    /// 1,024 when it cannot be read.
    ///
    /// - Parameter providerListeners: How many provider API listeners the process has.
    public static func ofThisProcess(providerListeners: Int) -> ConnectionCaps {
        ConnectionCaps(openFileLimit: OpenFileLimit.softLimit ?? 1_024, providerListeners: providerListeners)
    }
}
