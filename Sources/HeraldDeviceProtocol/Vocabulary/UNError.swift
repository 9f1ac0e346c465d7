import Foundation

/// The error domain of every `UNError`, as in Apple's framework.
public let UNErrorDomain: String = "UNErrorDomain"

/// Apple's `UNError`: an `NSError` in `UNErrorDomain` with a typed ``Code``.
///
/// Match it as on Apple's platforms: `catch UNError.notificationsNotAllowed { … }` or
/// `catch let error as UNError where error.code == .badgeInputInvalid { … }`.
public struct UNError: _BridgedStoredNSError {
    public let _nsError: NSError

    public init(_nsError error: NSError) {
        self._nsError = error
    }

    public static var errorDomain: String { UNErrorDomain }
    public static var _nsErrorDomain: String { UNErrorDomain }

    /// Apple's `UNErrorCode` values.
    ///
    /// `attachmentUnsupportedType` is left out: it appears only in Apple's beta documentation, with no raw value
    /// anywhere (research §1.11 GAP); guessing one would make `catch` clauses silently wrong.
    public enum Code: Int, _ErrorCodeProtocol, Sendable {
        public typealias _ErrorType = UNError

        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case attachmentUnrecognizedType = 101
        case attachmentInvalidFileSize = 102
        case attachmentNotInDataStore = 103
        case attachmentMoveIntoDataStoreFailed = 104
        case attachmentCorrupt = 105
        case notificationInvalidNoDate = 1400
        case notificationInvalidNoContent = 1401
        case contentProvidingObjectNotAllowed = 1500
        case contentProvidingInvalid = 1501
        case badgeInputInvalid = 1600
    }
}

extension UNError: Hashable {
    /// Hashes the domain and code: equal errors have both equal.
    ///
    /// Written out because the hashing Foundation gives a bridged error on Linux calls back into itself until the
    /// stack overflows, which ended any app that put a `UNError` in a `Set` or used it as a dictionary key.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(_nsError.domain)
        hasher.combine(_nsError.code)
    }

    /// The hash of ``hash(into:)``; Foundation's own `hashValue` for bridged errors is the one that recursed.
    public var hashValue: Int {
        var hasher = Hasher()
        hash(into: &hasher)
        return hasher.finalize()
    }

    /// Whether both wrap equal `NSError`s (domain, code and user info).
    public static func == (lhs: UNError, rhs: UNError) -> Bool {
        lhs._nsError.isEqual(rhs._nsError)
    }
}

extension UNError {
    public static var notificationsNotAllowed: UNError.Code { .notificationsNotAllowed }
    public static var attachmentInvalidURL: UNError.Code { .attachmentInvalidURL }
    public static var attachmentUnrecognizedType: UNError.Code { .attachmentUnrecognizedType }
    public static var attachmentInvalidFileSize: UNError.Code { .attachmentInvalidFileSize }
    public static var attachmentNotInDataStore: UNError.Code { .attachmentNotInDataStore }
    public static var attachmentMoveIntoDataStoreFailed: UNError.Code { .attachmentMoveIntoDataStoreFailed }
    public static var attachmentCorrupt: UNError.Code { .attachmentCorrupt }
    public static var notificationInvalidNoDate: UNError.Code { .notificationInvalidNoDate }
    public static var notificationInvalidNoContent: UNError.Code { .notificationInvalidNoContent }
    public static var contentProvidingObjectNotAllowed: UNError.Code { .contentProvidingObjectNotAllowed }
    public static var contentProvidingInvalid: UNError.Code { .contentProvidingInvalid }
    public static var badgeInputInvalid: UNError.Code { .badgeInputInvalid }
}

extension UNError {
    /// Builds the error Herald reports, with Apple's observed description where one is known and ours otherwise.
    ///
    /// - Parameters:
    ///   - code: The error code.
    ///   - reason: A more specific explanation, added as `NSLocalizedFailureReasonErrorKey`.
    public static func make(_ code: Code, reason: String? = nil) -> UNError {
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: code.defaultDescription]
        if let reason {
            userInfo[NSLocalizedFailureReasonErrorKey] = reason
        }
        return UNError(code, userInfo: userInfo)
    }
}

extension UNError.Code {
    /// Apple's observed `localizedDescription` where known (research §1.11), Herald's wording for the gaps.
    var defaultDescription: String {
        switch self {
        case .notificationsNotAllowed: "Notifications are not allowed for this application"
        case .attachmentInvalidURL: "Invalid attachment file URL"
        case .attachmentUnrecognizedType: "Unrecognized attachment file type"
        case .attachmentInvalidFileSize: "Invalid attachment file size"
        case .attachmentNotInDataStore: "Attachment is not in the data store"
        case .attachmentMoveIntoDataStoreFailed: "Attachment could not be moved into the data store"
        case .attachmentCorrupt: "Attachment file is corrupt"
        case .notificationInvalidNoDate: "Notification has no trigger date"
        case .notificationInvalidNoContent: "Notification has no user visible content"
        case .contentProvidingObjectNotAllowed: "Content providing object is not allowed"
        case .contentProvidingInvalid: "Content providing object is invalid"
        case .badgeInputInvalid: "Badge count must not be negative"
        }
    }
}
