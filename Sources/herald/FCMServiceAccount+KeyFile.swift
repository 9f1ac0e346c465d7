import Foundation
import HeraldFCM

extension FCMServiceAccount {
    /// Writes a service account's key file (Google's JSON) to `file`, readable by its owner only, making its folder.
    ///
    /// - Parameters:
    ///   - keyFile: The file's contents, as ``create(projectID:)`` made them.
    ///   - file: Where it goes.
    static func write(keyFile: Data, to file: URL) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: file.path, contents: keyFile, attributes: [.posixPermissions: 0o600])
        else { throw CommandFailure("could not write \(file.path)") }
    }
}
