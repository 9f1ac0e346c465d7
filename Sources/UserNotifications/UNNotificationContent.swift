import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationContent`: the read-only content of a notification.
///
/// Build content with ``UNMutableNotificationContent``; `mutableCopy()` of any content yields a mutable copy.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, NSSecureCoding {
    var storage: NotificationContentRecord
    var storedUserInfo: [AnyHashable: Any]
    var storedAttachments: [UNNotificationAttachment]

    init(storage: NotificationContentRecord, userInfo: [AnyHashable: Any], attachments: [UNNotificationAttachment]) {
        self.storage = storage
        self.storedUserInfo = userInfo
        self.storedAttachments = attachments
    }

    public var title: String { storage.title }
    public var subtitle: String { storage.subtitle }
    public var body: String { storage.body }
    /// `nil` leaves the badge unchanged, `0` removes it, a positive number shows it (N-4).
    public var badge: NSNumber? { storage.badge.map { NSNumber(value: $0) } }
    public var sound: UNNotificationSound? { storage.sound.map(UNNotificationSound.init(record:)) }
    public var launchImageName: String { storage.launchImageName }
    /// Property-list keys and values only (N-7).
    public var userInfo: [AnyHashable: Any] { storedUserInfo }
    public var attachments: [UNNotificationAttachment] { storedAttachments }
    public var categoryIdentifier: String { storage.categoryIdentifier }
    public var threadIdentifier: String { storage.threadIdentifier }
    public var targetContentIdentifier: String? { storage.targetContentIdentifier }
    @available(*, deprecated, message: "summaryArgument is ignored")
    public var summaryArgument: String { storage.summaryArgument }
    @available(*, deprecated, message: "summaryArgumentCount is ignored")
    public var summaryArgumentCount: Int { storage.summaryArgumentCount }
    /// Defaults to `.active` (Apple documents no default; research §4 gap 2).
    public var interruptionLevel: UNNotificationInterruptionLevel { storage.interruptionLevel }
    /// Expected 0…1; defaults to 0.
    public var relevanceScore: Double { storage.relevanceScore }
    public var filterCriteria: String? { storage.filterCriteria }

    /// Apple's content-provider update (N-17).
    ///
    /// Only objects from Apple's SDK (such as `INSendMessageIntent`) may provide content, and none exist on Linux,
    /// so every provider is refused with `UNError.Code.contentProvidingObjectNotAllowed`.
    public func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        throw UNError.make(
            .contentProvidingObjectNotAllowed,
            reason: "Only content providers from Apple's SDK are allowed; Herald has none.")
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        UNNotificationContent(storage: storage, userInfo: storedUserInfo, attachments: storedAttachments)
    }

    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        UNMutableNotificationContent(storage: storage, userInfo: storedUserInfo, attachments: storedAttachments)
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        guard let record = try? makeRecord() else { return }
        coder.encodeHeraldRecord(record)
    }

    public required init?(coder: NSCoder) {
        guard var record = coder.decodeHeraldRecord(NotificationContentRecord.self) else { return nil }
        self.storedUserInfo = UNNotificationContent.decodeUserInfo(record.userInfo)
        self.storedAttachments = record.attachments.map(UNNotificationAttachment.init(record:))
        record.userInfo = nil
        self.storage = record
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationContent else { return false }
        var lhs = storage, rhs = other.storage
        lhs.attachments = storedAttachments.map(\.record)
        rhs.attachments = other.storedAttachments.map(\.record)
        lhs.userInfo = nil
        rhs.userInfo = nil
        guard lhs == rhs else { return false }
        // Compare userInfo in its property-list form, so `7` and a decoded `NSNumber(7)` are equal.
        let mine = UNNotificationContent.decodeUserInfo(try? UNNotificationContent.encodeUserInfo(storedUserInfo))
        let theirs = UNNotificationContent.decodeUserInfo(try? UNNotificationContent.encodeUserInfo(other.storedUserInfo))
        return NSDictionary(dictionary: mine).isEqual(to: theirs)
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(storage.title)
        hasher.combine(storage.body)
        hasher.combine(storage.categoryIdentifier)
        return hasher.finalize()
    }

    open override var description: String {
        "<UNNotificationContent: title: \"\(title)\", subtitle: \"\(subtitle)\", body: \"\(body)\", "
            + "categoryIdentifier: \(categoryIdentifier), threadIdentifier: \(threadIdentifier), "
            + "badge: \(badge.map { "\($0)" } ?? "(null)"), attachments: \(attachments.count)>"
    }
}

extension UNNotificationContent {
    /// The `Sendable` record of this content; keeps `userInfo` as ``UserInfoArchive`` does (JSON, or a property list).
    ///
    /// - Throws: `CocoaError(.propertyListWriteInvalid)` when `userInfo` holds a non-property-list value.
    package func makeRecord() throws -> NotificationContentRecord {
        var record = storage
        record.attachments = storedAttachments.map(\.record)
        record.userInfo = try UNNotificationContent.encodeUserInfo(storedUserInfo)
        return record
    }

    /// Builds immutable content from a record, as the center hands it out.
    package convenience init(record: NotificationContentRecord) {
        var storage = record
        storage.userInfo = nil
        self.init(
            storage: storage,
            userInfo: UNNotificationContent.decodeUserInfo(record.userInfo),
            attachments: record.attachments.map(UNNotificationAttachment.init(record:))
        )
    }

    static func encodeUserInfo(_ userInfo: [AnyHashable: Any]) throws -> Data? {
        do {
            return try UserInfoArchive.data(for: userInfo)
        } catch {
            throw CocoaError(.propertyListWriteInvalid, userInfo: [NSDebugDescriptionErrorKey: error.description])
        }
    }

    static func decodeUserInfo(_ data: Data?) -> [AnyHashable: Any] {
        UserInfoArchive.dictionary(from: data)
    }
}

/// Apple's marker for objects that may update notification content (iOS 15). Apple: do not conform your own types.
public protocol UNNotificationContentProviding: NSObjectProtocol {}
