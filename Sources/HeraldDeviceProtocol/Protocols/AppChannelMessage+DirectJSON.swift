import Foundation
import HeraldCore

/// The two messages every foreground push carries — ``AppChannelMessage/willPresent(id:notification:)`` to the app and
/// ``AppChannelMessage/presented(id:options:)`` back — written and read without `Codable`, as the same JSON.
///
/// `JSONEncoder` and `JSONDecoder` were a tenth of the end-to-end benchmark's CPU (the daemon encoding the question,
/// the app decoding it, and the answer the other way): `Codable`'s dispatch per value, as for the store's request
/// documents (``NotificationRequestRecord/storedJSON()``). Every other message, and any of these two holding a kind
/// the direct form leaves to `Codable` (a calendar trigger, an iOS 8 request, a sound's volume), goes through `Codable`
/// as before; both forms read each other's lines.
extension AppChannelMessage {
    /// The message as a JSON value written directly; `nil` for one `JSONEncoder` writes.
    public func directJSONValue() -> JSONValue? {
        switch self {
        case .willPresent(let id, let notification):
            var numbers = StoredJSONNumbers()
            guard notification.request.legacy == nil, let request = notification.request.storedJSONValue(&numbers),
                numbers.allFinite, notification.date.timeIntervalSinceReferenceDate.isFinite
            else { return nil }
            let delivered = JSONValue.object([
                .init("date", .number(notification.date.timeIntervalSinceReferenceDate)), .init("request", request),
            ])
            return .object([.init("willPresent", .object([.init("id", .integer(Int64(id))), .init("notification", delivered)]))])
        case .presented(let id, let options):
            var members: [JSONValue.Member] = [.init("id", .integer(Int64(id)))]
            if let options {
                guard let value = Int64(exactly: options) else { return nil }
                members.append(.init("options", .integer(value)))
            }
            return .object([.init("presented", .object(members))])
        default:
            return nil
        }
    }

    /// Reads a line holding one of the two messages; `nil` for any other line, which `JSONDecoder` reads (or refuses).
    ///
    /// - Parameter line: One line of the app channel, without its newline.
    public init?(directJSON line: Data) {
        guard line.starts(with: Self.willPresentOpening) || line.starts(with: Self.presentedOpening),
            let value = try? JSONValue(parsing: line), case .object(let members) = value, members.count == 1,
            let only = members.first, case .integer(let rawID) = only.value["id"], let id = Int(exactly: rawID)
        else { return nil }
        switch only.key {
        case "willPresent":
            guard let notification = only.value["notification"],
                let date = notification["date"]?.doubleValue,
                let request = notification["request"].flatMap(NotificationRequestRecord.init(storedJSONValue:))
            else { return nil }
            self = .willPresent(
                id: id, notification: DeliveredNotification(request: request, date: Date(timeIntervalSinceReferenceDate: date)))
        case "presented":
            switch only.value["options"] {
            case nil, .null?:
                self = .presented(id: id, options: nil)
            case .integer(let options)?:
                guard let options = UInt(exactly: options) else { return nil }
                self = .presented(id: id, options: options)
            default:
                return nil
            }
        default:
            return nil
        }
    }

    // The openings are literals' bytes, not `Data` made once: a static `Data` keeps its bytes behind a pointer that
    // LeakSanitizer cannot see as one (the enum case's tag is in the pointer's spare bits), so every fuzzing run of
    // the app channel ended with a reported "leak" of them.
    private static var willPresentOpening: String.UTF8View { #"{"willPresent":"#.utf8 }
    private static var presentedOpening: String.UTF8View { #"{"presented":"#.utf8 }
}
