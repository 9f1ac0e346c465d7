import Foundation
import HeraldCore

/// Who this device is to its gateway: an ID and the secret it enrolled with (the first connection of an ID
/// enrols it), kept in `<data-dir>/device-identity.json`, readable by its user only.
public struct DeviceIdentity: Sendable, Hashable, Codable {
    /// The device's ID: 1–128 letters, digits, `.`, `-`, `_`.
    public var deviceID: String
    /// The device's secret.
    public var secret: String

    /// An identity with this ID and secret.
    public init(deviceID: String, secret: String) {
        self.deviceID = deviceID
        self.secret = secret
    }

    /// The identity file of a data directory.
    public static func file(in directory: HeraldDataDirectory) -> URL {
        directory.url.appendingPathComponent("device-identity.json")
    }

    /// Reads the data directory's identity, or makes one (host name plus a random suffix, a random secret) and
    /// writes it with mode 0600.
    ///
    /// - Throws: When the file exists but cannot be read, or a new one cannot be written.
    public static func loadOrCreate(
        in directory: HeraldDataDirectory, hostName: String = ProcessInfo.processInfo.hostName
    )
        throws -> DeviceIdentity
    {
        let url = file(in: directory)
        if FileManager.default.fileExists(atPath: url.path) {
            return try JSONDecoder().decode(DeviceIdentity.self, from: Data(contentsOf: url))
        }
        try directory.create()
        let name = String(
            String.UnicodeScalarView(
                hostName.unicodeScalars.filter { scalar in
                    scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == ".")
                }
            ).prefix(64))
        var generator = SystemRandomNumberGenerator()
        func hex(_ count: Int) -> String {
            (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }.lowercaseHex
        }
        let identity = DeviceIdentity(deviceID: "\(name.isEmpty ? "device" : name)-\(hex(4))", secret: hex(32))
        let data = try JSONEncoder().encode(identity)
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        return identity
    }
}
