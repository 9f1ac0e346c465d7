import HeraldCore

/// An error of the FCM HTTP v1 API, answered in Google's JSON form so the Admin SDKs raise their documented
/// exceptions: `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND", "details": [{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}`.
///
/// The SDKs choose their exception class from the `FcmError` detail's `errorCode` first and the HTTP status second,
/// so each FCM error carries both (Google's ErrorCode reference); the API's own errors (a bad bearer token, a project
/// the credentials may not use) carry only the status.
public struct FCMError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as FCM names it.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// 400: the request or a field of it is invalid (the message says which).
        case invalidArgument = "INVALID_ARGUMENT"
        /// 404: the registration token is unknown, revoked or expired.
        case unregistered = "UNREGISTERED"
        /// 403: the token belongs to another project.
        case senderIDMismatch = "SENDER_ID_MISMATCH"
        /// 429: the project's sending rate was exceeded.
        case quotaExceeded = "QUOTA_EXCEEDED"
        /// 503: the server is overloaded or its store is away.
        case unavailable = "UNAVAILABLE"
        /// 500: an unknown error.
        case `internal` = "INTERNAL"
        /// 401: APNs refused the project's credentials.
        case thirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
        /// 401: the bearer token is missing, expired or forged (no FCM detail).
        case unauthenticated = "UNAUTHENTICATED"
        /// 403: the credentials may not act on this project (no FCM detail).
        case permissionDenied = "PERMISSION_DENIED"
        /// 404: the path names nothing (no FCM detail).
        case notFound = "NOT_FOUND"
        /// 409: a topic subscription that exists already (no FCM detail; the Admin SDKs take it as success).
        case alreadyExists = "ALREADY_EXISTS"

        /// The HTTP status Google answers with.
        public var httpStatus: Int {
            switch self {
            case .invalidArgument: 400
            case .unregistered, .notFound: 404
            case .senderIDMismatch, .permissionDenied: 403
            case .quotaExceeded: 429
            case .unavailable: 503
            case .internal: 500
            case .thirdPartyAuthError, .unauthenticated: 401
            case .alreadyExists: 409
            }
        }

        /// The `google.rpc.Code` name in `error.status`.
        public var status: String {
            switch self {
            case .invalidArgument: "INVALID_ARGUMENT"
            case .unregistered, .notFound: "NOT_FOUND"
            case .senderIDMismatch, .permissionDenied: "PERMISSION_DENIED"
            case .quotaExceeded: "RESOURCE_EXHAUSTED"
            case .unavailable: "UNAVAILABLE"
            case .internal: "INTERNAL"
            case .thirdPartyAuthError, .unauthenticated: "UNAUTHENTICATED"
            case .alreadyExists: "ALREADY_EXISTS"
            }
        }

        /// Whether the body carries a `google.firebase.fcm.v1.FcmError` detail with this code.
        public var isFCMErrorCode: Bool {
            switch self {
            case .unauthenticated, .permissionDenied, .notFound, .alreadyExists: false
            default: true
            }
        }
    }

    /// The code.
    public var code: Code
    /// The human-readable message (`error.message`).
    public var message: String
    /// For ``Code/invalidArgument``: the field at fault (`message.topic`), reported as a `google.rpc.BadRequest`
    /// field violation.
    public var field: String?
    /// Seconds the caller should wait before it tries again, sent as `Retry-After`; `nil`: no header.
    public var retryAfter: Int?

    /// An error with `code` and `message`.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: What to tell the caller.
    ///   - field: The field at fault, for invalid arguments.
    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The response body.
    public var body: JSONValue {
        var details: [JSONValue] = []
        if code.isFCMErrorCode {
            details.append(
                .object([
                    .init("@type", "type.googleapis.com/google.firebase.fcm.v1.FcmError"),
                    .init("errorCode", .string(code.rawValue)),
                ]))
        }
        if let field {
            details.append(
                .object([
                    .init("@type", "type.googleapis.com/google.rpc.BadRequest"),
                    .init(
                        "fieldViolations",
                        .array([.object([.init("field", .string(field)), .init("description", .string(message))])])),
                ]))
        }
        var error: [JSONValue.Member] = [
            .init("code", .integer(Int64(code.httpStatus))),
            .init("message", .string(message)),
            .init("status", .string(code.status)),
        ]
        if !details.isEmpty { error.append(.init("details", .array(details))) }
        return .object([.init("error", .object(error))])
    }
}
