import Foundation
import HeraldCore
import HeraldProvider
import NIOPosix

/// How the console's send form reaches the gateway: its provider API, as any provider does, with a `.p8` key kept in
/// the data directory as `AuthKey_<key ID>.p8` (`herald up` keeps its key there; copy a key made with
/// `herald keys create --out` there to send with it).
public struct ConsoleSender: Sendable {
    /// The gateway's TLS provider API for an environment, once it listens (`nil` if it never does, or the gateway has
    /// none for that environment).
    let providerURL: @Sendable (APNsEnvironment) async -> URL?
    /// The CA the provider API's certificate chains to.
    let certificateAuthorityFile: String?
    /// Where the `.p8` keys are.
    let keyDirectory: URL

    /// A sender for the gateway whose provider API `providerURL` gives.
    ///
    /// - Parameters:
    ///   - providerURL: The provider API's base URL for an environment (`https://localhost:2197`), once the gateway
    ///     listens; `nil` for an environment it does not serve.
    ///   - certificateAuthorityFile: The gateway's CA file (`tls/ca.pem`), or `nil` for the system's roots.
    ///   - keyDirectory: The folder that holds `AuthKey_<key ID>.p8` files.
    public init(
        providerURL: @escaping @Sendable (APNsEnvironment) async -> URL?, certificateAuthorityFile: String?,
        keyDirectory: URL
    ) {
        self.providerURL = providerURL
        self.certificateAuthorityFile = certificateAuthorityFile
        self.keyDirectory = keyDirectory
    }

    /// The key IDs of the `.p8` files in the key directory, sorted (read off the cooperative pool).
    func keyIDs() async -> [String] {
        let directory = keyDirectory
        return
            ((try? await NIOThreadPool.singleton.runIfActive {
                try FileManager.default.contentsOfDirectory(atPath: directory.path)
            }) ?? []).compactMap { name -> String? in
                guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
                return String(name.dropFirst(8).dropLast(3))
            }.sorted()
    }

    /// The `.p8` key's PEM (read off the cooperative pool); `nil` when there is no such file.
    func key(_ keyID: String) async -> String? {
        guard keyID.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        let file = keyDirectory.appendingPathComponent("AuthKey_\(keyID).p8")
        return try? await NIOThreadPool.singleton.runIfActive { try String(contentsOf: file, encoding: .utf8) }
    }
}
