import Foundation
import NIOCore

/// A listener of the gateway could not bind: another process listens on its port.
public struct ListenerAddressInUse: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which listener.
    public enum Listener: Sendable, Equatable {
        /// `GatewayConfiguration.providerListeners`' listener at this index.
        case provider(index: Int)
        /// The device channel.
        case device
        /// The console (`HeraldConsole`).
        case console
        /// Firebase Cloud Messaging's API.
        case fcm
        /// A device's own test-bed API (`herald device --api-port`).
        case deviceAPI
    }

    public var listener: Listener
    public var host: String
    public var port: Int

    public var description: String { "port \(port) on \(host) is in use" }

    /// `error` as this error when it is a bind's `EADDRINUSE`; `nil` otherwise.
    public static func from(_ error: any Error, listener: Listener, host: String, port: Int) -> ListenerAddressInUse? {
        guard let io = error as? IOError, io.errnoCode == EADDRINUSE else { return nil }
        return ListenerAddressInUse(listener: listener, host: host, port: port)
    }
}
