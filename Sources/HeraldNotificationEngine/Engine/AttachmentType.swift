import Foundation
import HeraldDeviceProtocol

/// A file type Apple accepts as a notification attachment (research §1.7, Table 1), with its limits and signature.
package struct AttachmentType: Sendable, Hashable {
    enum Kind: String, Sendable {
        case audio, image, movie
    }

    /// The uniform type identifier (the value of Apple's `kUTType…` constant).
    package let identifier: String
    let kind: Kind
    let fileExtensions: [String]

    /// The largest file of this kind Apple accepts: audio 5 MB, images 10 MB, movies 50 MB (binary megabytes).
    var maximumSize: Int {
        switch kind {
        case .audio: 5 * 1024 * 1024
        case .image: 10 * 1024 * 1024
        case .movie: 50 * 1024 * 1024
        }
    }

    static let all: [AttachmentType] = [
        AttachmentType(identifier: "public.aiff-audio", kind: .audio, fileExtensions: ["aif", "aiff", "aifc"]),
        AttachmentType(identifier: "com.microsoft.waveform-audio", kind: .audio, fileExtensions: ["wav", "wave"]),
        AttachmentType(identifier: "public.mp3", kind: .audio, fileExtensions: ["mp3"]),
        AttachmentType(identifier: "public.mpeg-4-audio", kind: .audio, fileExtensions: ["m4a"]),
        AttachmentType(identifier: "public.jpeg", kind: .image, fileExtensions: ["jpg", "jpeg", "jpe"]),
        AttachmentType(identifier: "com.compuserve.gif", kind: .image, fileExtensions: ["gif"]),
        AttachmentType(identifier: "public.png", kind: .image, fileExtensions: ["png"]),
        AttachmentType(identifier: "public.mpeg", kind: .movie, fileExtensions: ["mpg", "mpeg"]),
        AttachmentType(identifier: "public.mpeg-2-video", kind: .movie, fileExtensions: ["m2v"]),
        AttachmentType(identifier: "public.mpeg-4", kind: .movie, fileExtensions: ["mp4", "m4v"]),
        AttachmentType(identifier: "public.avi", kind: .movie, fileExtensions: ["avi"]),
    ]

    /// The type for a UTI given as a type hint.
    static func forIdentifier(_ identifier: String) -> AttachmentType? {
        all.first { $0.identifier == identifier.lowercased() }
    }

    /// The type guessed from a file extension (case-insensitive).
    static func forExtension(_ fileExtension: String) -> AttachmentType? {
        let lowercased = fileExtension.lowercased()
        return all.first { $0.fileExtensions.contains(lowercased) }
    }

    /// Whether `header` (the file's first bytes) looks like a file of this type.
    ///
    /// This is the check behind `attachmentCorrupt`: a `.png` that is really text, or a truncated JPEG header.
    func matches(header: [UInt8]) -> Bool {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            header.count >= offset + bytes.count && Array(header[offset..<offset + bytes.count]) == bytes
        }
        let ascii = { (string: String) in Array(string.utf8) }
        switch identifier {
        case "public.png": return starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "public.jpeg": return starts([0xFF, 0xD8, 0xFF])
        case "com.compuserve.gif": return starts(ascii("GIF87a")) || starts(ascii("GIF89a"))
        case "com.microsoft.waveform-audio": return starts(ascii("RIFF")) && starts(ascii("WAVE"), at: 8)
        case "public.avi": return starts(ascii("RIFF")) && starts(ascii("AVI "), at: 8)
        case "public.aiff-audio": return starts(ascii("FORM")) && (starts(ascii("AIFF"), at: 8) || starts(ascii("AIFC"), at: 8))
        case "public.mp3":
            return starts(ascii("ID3")) || (header.count >= 2 && header[0] == 0xFF && header[1] & 0xE0 == 0xE0)
        case "public.mpeg-4-audio", "public.mpeg-4": return starts(ascii("ftyp"), at: 4)
        case "public.mpeg", "public.mpeg-2-video":
            return starts([0x00, 0x00, 0x01, 0xBA]) || starts([0x00, 0x00, 0x01, 0xB3])
        default: return false
        }
    }
}

/// Checks a file the way Apple does before it becomes an attachment (N-40, B-40).
package enum AttachmentValidator {
    /// Validates the file at `url` and returns its type.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - typeHint: A UTI from `UNNotificationAttachmentOptionsTypeHintKey`, which wins over the extension.
    /// - Throws: `UNError` with the code that names what is wrong.
    package static func validate(fileAt url: URL, typeHint: String?) throws -> AttachmentType {
        guard url.isFileURL else {
            throw UNError.make(.attachmentInvalidURL, reason: "\(url.absoluteString) is not a file URL")
        }
        let path = url.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isReadableFile(atPath: path)
        else {
            throw UNError.make(.attachmentInvalidURL, reason: "No readable file at \(path)")
        }
        let type: AttachmentType
        if let typeHint {
            guard let hinted = AttachmentType.forIdentifier(typeHint) else {
                throw UNError.make(.attachmentUnrecognizedType, reason: "Type hint \(typeHint) is not a supported type")
            }
            type = hinted
        } else {
            guard let guessed = AttachmentType.forExtension(url.pathExtension) else {
                throw UNError.make(
                    .attachmentUnrecognizedType,
                    reason: "Cannot tell the type of \(url.lastPathComponent) from its extension")
            }
            type = guessed
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0, size <= type.maximumSize else {
            throw UNError.make(
                .attachmentInvalidFileSize,
                reason:
                    "\(url.lastPathComponent) is \(size) bytes; \(type.kind.rawValue) attachments must be 1…\(type.maximumSize)"
            )
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw UNError.make(.attachmentInvalidURL, reason: "Cannot open \(path)")
        }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 16)) ?? Data())
        guard type.matches(header: header) else {
            throw UNError.make(
                .attachmentCorrupt,
                reason: "\(url.lastPathComponent) does not contain \(type.identifier) data")
        }
        return type
    }
}
