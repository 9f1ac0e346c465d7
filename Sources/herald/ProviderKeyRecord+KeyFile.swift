import Crypto
import Foundation
import HeraldGatewayStore
import NIOPosix

extension ProviderKeyRecord {
    /// Whether the `.p8` at `path` is this key's private half — the file that signs for it now, after a
    /// `keys create/import --replace` too; `false` when it is another key's, or cannot be read.
    ///
    /// - Parameter path: A `.p8` file.
    func isSigned(byFileAt path: String) async -> Bool {
        guard let text = try? await InputFile.text(path, option: "the key"),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let registered = try? P256.Signing.PublicKey(pemRepresentation: publicKeyPEM)
        else { return false }
        return key.publicKey.rawRepresentation == registered.rawRepresentation
    }

    /// The `.p8` file among `files` that signs for this key, if one does: the one named after the key first (herald
    /// up's `AuthKey_<key ID>.p8`, Apple's name), then the others.
    ///
    /// - Parameter files: The `.p8` files to look at (``p8Files(in:)``).
    func keyFile(among files: [URL]) async -> String? {
        let named = "AuthKey_\(keyID).p8"
        for file in files.filter({ $0.lastPathComponent == named }) + files.filter({ $0.lastPathComponent != named }) {
            if await isSigned(byFileAt: file.path) { return file.path }
        }
        return nil
    }

    /// The `.p8` files in `folder` (not its subfolders), listed on NIO's thread pool.
    ///
    /// - Parameter folder: The data directory.
    static func p8Files(in folder: URL) async -> [URL] {
        let names =
            (try? await NIOThreadPool.singleton.runIfActive {
                (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            }) ?? []
        return names.filter { $0.hasSuffix(".p8") }.map { folder.appendingPathComponent($0) }
    }
}
