import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway

/// A benchmark's scratch data directory: the provider key and topic the benchmarks push with, and tokens of
/// devices that are not connected.
struct BenchmarkWorkspace {
    static let keyID = "BENCHKEY01"
    static let teamID = "BENCHTEAM1"
    static let topic = "com.example.bench"

    /// The folder; the data directory lives at its root.
    let folder: URL
    let dataDirectory: HeraldDataDirectory
    /// Where the provider key's `.p8` is written.
    var keyFile: URL { folder.appendingPathComponent("AuthKey_\(Self.keyID).p8") }

    /// Creates a fresh folder.
    ///
    /// - Parameter directory: Where to put it; a temporary folder by default.
    init(in directory: String?) throws {
        folder = URL(fileURLWithPath: directory ?? NSTemporaryDirectory())
            .appendingPathComponent("herald-bench-\(UUID().uuidString)", isDirectory: true)
        dataDirectory = HeraldDataDirectory(url: folder)
        try dataDirectory.create()
    }

    /// Deletes the folder and everything in it.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Registers the bench key in `store` and writes it to ``keyFile``.
    func registerProviderKey(in store: any ProviderKeyStore) async throws {
        try await store.createProviderKey(keyID: Self.keyID, teamID: Self.teamID, file: keyFile, replacingFile: true)
    }

    /// One token of ``topic`` for each of `count` devices that are not connected.
    func offlineTokens(_ count: Int, in store: any DeviceTokenStore) async throws -> [String] {
        var tokens: [String] = []
        for index in 0..<count {
            let record = try await store.activeToken(
                deviceID: "bench-offline-\(index)", bundleID: Self.topic, environment: .development, at: Date())
            tokens.append(record.token)
        }
        return tokens
    }
}

/// Fails validation unless `path` is an executable, saying how to install it.
///
/// - Parameters:
///   - path: The option's value.
///   - option: The option's name, without dashes.
///   - package: The Debian package that has it.
func requireExecutable(_ path: String, option: String, package: String) throws {
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw ValidationError(
            "\(option) not found at \(path). Install it (apt-get install -y \(package)) or pass --\(option) PATH.")
    }
}
