import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotification`: a delivered request and the date it was delivered.
open class UNNotification: NSObject, NSCopying, NSSecureCoding {
    public let date: Date
    public let request: UNNotificationRequest

    init(date: Date, request: UNNotificationRequest) {
        self.date = date
        self.request = request
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    private struct Archive: Codable {
        var date: Date
        var request: NotificationRequestRecord
    }

    public func encode(with coder: NSCoder) {
        guard let request = try? request.makeRecord() else { return }
        coder.encodeHeraldRecord(Archive(date: date, request: request))
    }

    public required init?(coder: NSCoder) {
        guard let archive = coder.decodeHeraldRecord(Archive.self) else { return nil }
        self.date = archive.date
        self.request = UNNotificationRequest(record: archive.request, context: .standalone)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotification else { return false }
        return date == other.date && request.isEqual(other.request)
    }

    open override var hash: Int { request.identifier.hashValue }

    open override var description: String {
        "<UNNotification: date: \(date), request: \(request)>"
    }
}

extension UNNotification {
    /// A notification object from a delivered record.
    package convenience init(delivered: DeliveredNotification, context: TriggerContext) {
        self.init(date: delivered.date, request: UNNotificationRequest(record: delivered.request, context: context))
    }
}
