import Foundation

/// Which APNs environment a token set with ``Messaging/setAPNSToken(_:type:)`` is of.
public enum MessagingAPNSTokenType: Int, Sendable {
    case unknown = 0
    case sandbox = 1
    case prod = 2
}

/// Whether ``Messaging/appDidReceiveMessage(_:)`` saw a message before.
public enum MessagingMessageStatus: Int, Sendable {
    case unknown = 0
    case new = 1
}

/// What ``Messaging/appDidReceiveMessage(_:)`` says of a message.
open class MessagingMessageInfo: NSObject {
    /// New, or seen before (`unknown`).
    open private(set) var status: MessagingMessageStatus

    init(status: MessagingMessageStatus) {
        self.status = status
        super.init()
    }
}

/// Firebase Cloud Messaging's errors (`MessagingError.Code` in Firebase's Swift API).
public struct MessagingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error's kind.
    public enum Code: Int, Sendable {
        case unknown = 0
        case authentication = 1
        case noAccess = 2
        case timeout = 3
        case network = 4
        case operationInProgress = 5
        case invalidRequest = 7
        case invalidTopicName = 8
    }

    /// The kind.
    public var code: Code
    /// What went wrong.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "MessagingError \(code): \(message)" }
}
