import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Options key: a UTI string that overrides the type guessed from the file extension.
///
/// Apple does not publish the keys' string values (research N-46); Herald uses the constant's own name, as
/// third-party code that passes the literal name expects.
public let UNNotificationAttachmentOptionsTypeHintKey: String = "UNNotificationAttachmentOptionsTypeHintKey"
/// Options key: a Boolean `NSNumber`, whether the thumbnail is hidden (default `false`).
public let UNNotificationAttachmentOptionsThumbnailHiddenKey: String = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// Options key: a normalized clipping rectangle as a dictionary with `X`, `Y`, `Width`, `Height`.
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey: String =
    "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// Options key: an animated-image frame number or a movie time in seconds (`NSNumber`).
public let UNNotificationAttachmentOptionsThumbnailTimeKey: String = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// Apple's `UNNotificationAttachment`: an image, audio or movie file shown with a notification.
///
/// Creating one checks the file now (readable, supported type, within the type's size limit, contents match the
/// type); adding the request moves the file into the app's attachment data store (B-40, B-41).
open class UNNotificationAttachment: NSObject, NSCopying, NSSecureCoding {
    let record: NotificationAttachmentRecord

    package init(record: NotificationAttachmentRecord) {
        self.record = record
    }

    /// Creates an attachment from a local file.
    ///
    /// - Parameters:
    ///   - identifier: The attachment's identifier; an empty string gets a unique one (N-40).
    ///   - URL: A `file:` URL the process can read.
    ///   - options: `UNNotificationAttachmentOptions…Key` entries.
    /// - Throws: `UNError` — `attachmentInvalidURL` (not a readable file), `attachmentUnrecognizedType`,
    ///   `attachmentInvalidFileSize` (empty or over the type's limit) or `attachmentCorrupt` (contents don't match).
    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        let typeHint = options?[UNNotificationAttachmentOptionsTypeHintKey] as? String
        let type = try AttachmentValidator.validate(fileAt: URL, typeHint: typeHint)
        var record = NotificationAttachmentRecord(
            identifier: identifier.isEmpty ? UUID().uuidString : identifier,
            path: URL.standardizedFileURL.path,
            type: type.identifier
        )
        if let hidden = options?[UNNotificationAttachmentOptionsThumbnailHiddenKey] {
            record.thumbnailHidden = (hidden as? NSNumber)?.boolValue ?? (hidden as? Bool) ?? false
        }
        if let rect = options?[UNNotificationAttachmentOptionsThumbnailClippingRectKey] as? [AnyHashable: Any] {
            var clipping: [String: Double] = [:]
            for (key, value) in rect {
                if let key = key.base as? String, let number = (value as? NSNumber)?.doubleValue ?? (value as? Double) {
                    clipping[key] = number
                }
            }
            record.thumbnailClippingRect = clipping
        }
        if let time = options?[UNNotificationAttachmentOptionsThumbnailTimeKey] {
            record.thumbnailTime = (time as? NSNumber)?.doubleValue ?? (time as? Double)
        }
        self.init(record: record)
    }

    /// Apple's synthesized alias of ``init(identifier:url:options:)``.
    public convenience init(identifier: String, URL: URL, options: [AnyHashable: Any]? = nil) throws {
        try self.init(identifier: identifier, url: URL, options: options)
    }

    public var identifier: String { record.identifier }

    /// The file: in the app's container until the request is added, in the attachment data store afterwards.
    public var url: URL { URL(fileURLWithPath: record.path) }

    /// The uniform type identifier, e.g. `public.png`.
    public var type: String { record.type }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationAttachmentRecord.self) else { return nil }
        self.record = record
    }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationAttachment)?.record == record
    }

    open override var hash: Int { record.hashValue }

    open override var description: String {
        "<UNNotificationAttachment: identifier: \(identifier), url: \(url.path), type: \(type)>"
    }
}
