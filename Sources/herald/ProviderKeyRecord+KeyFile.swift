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

    /// The `.p8` file in `folder` (not its subfolders) that signs for this key, if one does.
    ///
    /// - Parameter folder: The data directory.
    func keyFile(in folder: URL) async -> String? {
        let files =
            (try? await NIOThreadPool.singleton.runIfActive {
                (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            }) ?? []
        // The file named after the key first (herald up's AuthKey_<key ID>.p8, Apple's name), then the others.
        let named = "AuthKey_\(keyID).p8"
        for name in files.filter({ $0.hasSuffix(".p8") }).sorted(by: { a, _ in a == named }) {
            let path = folder.appendingPathComponent(name).path
            if await isSigned(byFileAt: path) { return path }
        }
        return nil
    }
}
