import Foundation
import HeraldDeviceProtocol
import Logging

/// The attachment data store: where attachment files live once their request is added (B-41, B-42).
///
/// Each app has a folder; each added attachment gets a fresh sub-folder, so a replaced request's files never
/// collide with its successor's. Files are moved in, or copied when the source cannot be removed (a read-only
/// bundle). They are deleted when no pending request and no delivered notification refers to them.
struct AttachmentDataStore: Sendable {
    let root: URL
    private let logger: Logger

    init(root: URL, logger: Logger) {
        self.root = root
        self.logger = logger
    }

    /// Moves (or copies) the attachments' files into the app's folder and returns the records pointing at them.
    ///
    /// Files already in the data store (content taken from a delivered notification) are kept where they are.
    ///
    /// - Throws: `UNError` — the file's own validation error if it changed since the attachment was made, or
    ///   `attachmentMoveIntoDataStoreFailed`. Files moved before the failure are moved back.
    func moveIn(
        _ attachments: [NotificationAttachmentRecord], for bundleIdentifier: String
    ) throws -> [NotificationAttachmentRecord] {
        var moved: [(from: String, to: String, copied: Bool)] = []
        do {
            return try attachments.map { attachment in
                if attachment.path.hasPrefix(root.path + "/") { return attachment }
                let source = URL(fileURLWithPath: attachment.path)
                _ = try AttachmentValidator.validate(fileAt: source, typeHint: attachment.type)
                let folder = root.appendingPathComponent(Self.folderName(for: bundleIdentifier), isDirectory: true)
                    .appendingPathComponent(UUID().uuidString, isDirectory: true)
                let destination = folder.appendingPathComponent(source.lastPathComponent)
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let copied = Self.isInsideBundle(source) || !FileManager.default.isDeletableFile(atPath: source.path)
                    if copied {
                        try FileManager.default.copyItem(at: source, to: destination)
                    } else {
                        try FileManager.default.moveItem(at: source, to: destination)
                    }
                    moved.append((source.path, destination.path, copied))
                } catch {
                    throw UNError.make(
                        .attachmentMoveIntoDataStoreFailed, reason: "\(source.path): \(error.localizedDescription)")
                }
                var stored = attachment
                stored.path = destination.path
                return stored
            }
        } catch {
            for item in moved.reversed() {
                if item.copied {
                    try? FileManager.default.removeItem(atPath: item.to)
                } else {
                    try? FileManager.default.moveItem(atPath: item.to, toPath: item.from)
                }
                try? FileManager.default.removeItem(atPath: (item.to as NSString).deletingLastPathComponent)
            }
            throw error
        }
    }

    /// Deletes the files of `attachments` that no record in `stillReferenced` uses.
    func delete(
        _ attachments: [NotificationAttachmentRecord], keeping stillReferenced: [NotificationAttachmentRecord] = []
    ) {
        let kept = Set(stillReferenced.map(\.path))
        for attachment in attachments where !kept.contains(attachment.path) && attachment.path.hasPrefix(root.path + "/") {
            let folder = (attachment.path as NSString).deletingLastPathComponent
            do {
                try FileManager.default.removeItem(atPath: folder)
            } catch {
                logger.debug("Attachment already gone", metadata: ["attachment.path": "\(attachment.path)"])
            }
        }
    }

    /// Whether a file belongs to a bundle (an app's, or a SwiftPM resource bundle), whose files are copied, not moved.
    static func isInsideBundle(_ url: URL) -> Bool {
        url.deletingLastPathComponent().pathComponents.contains { component in
            [".app", ".appex", ".bundle", ".resources", ".framework"].contains { component.hasSuffix($0) }
        }
    }

    /// The app's folder name: the bundle identifier, made safe as one path component.
    static func folderName(for bundleIdentifier: String) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-_"))
        let safe = bundleIdentifier.unicodeScalars.map { allowed.contains($0) ? String($0) : "_" }.joined()
        return safe.isEmpty || safe == "." || safe == ".." ? "_" : safe
    }
}
