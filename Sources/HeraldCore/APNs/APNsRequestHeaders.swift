import Foundation

/// The APNs headers of one `POST /3/device/<token>` request, read and checked per APNs §1.2–§1.3.
///
/// Checks that need no state (syntax, ranges, push type/topic/priority combinations) happen here, so the
/// gateway and the provider library refuse the same requests with the same reasons.
public struct APNsRequestHeaders: Sendable, Equatable {
    /// When a notification stops being worth delivering (`apns-expiration`, S-06).
    public enum Expiration: Sendable, Equatable {
        /// Header absent: stored under the default policy (30 days, D-03).
        case storagePolicy
        /// `0`: one delivery attempt, never stored (D-05).
        case immediately
        /// Stored and retried until this time.
        case at(Date)
    }

    /// `apns-id`, lowercased, if the request carried one.
    public var apnsID: String?
    /// `apns-push-type`, or `nil` when absent (the gateway infers it from the payload).
    public var pushType: APNsPushType?
    /// `apns-expiration`.
    public var expiration: Expiration
    /// `apns-priority`, `nil` when absent (10 by default; 5 for background).
    public var priority: APNsPriority?
    /// `apns-topic`, if present.
    public var topic: String?
    /// `apns-collapse-id`, if present.
    public var collapseID: String?
    /// The JWT after `bearer ` in `authorization`; `nil` when the header is absent or empty.
    public var bearerToken: String?

    /// The longest `apns-collapse-id`, in bytes (S-09).
    public static let maximumCollapseIDSize = 64

    /// Reads the headers; the first rule broken decides the reason.
    ///
    /// - Parameter fields: Every non-pseudo header as (lowercased name, value), repeats included.
    /// - Returns: The headers, or the reason to refuse the request with, and the `apns-id` to answer with when it
    ///   was valid.
    public static func parse(_ fields: [(name: String, value: String)]) -> Result<APNsRequestHeaders, APNsRefusal> {
        // Read on every push: no set or dictionary of names, no lowercased copies (names are compared in any case).
        var values = KnownFields()
        var duplicate = false
        if fields.count <= 16 {
            for index in fields.indices {
                let name = fields[index].name
                if !duplicate { duplicate = fields[..<index].contains { Self.sameName($0.name, name) } }
                values.take(name, fields[index].value)
            }
        } else {
            var seen = Set<String>()
            for (name, value) in fields {
                if !seen.insert(name.lowercased()).inserted { duplicate = true }
                values.take(name, value)
            }
        }
        var headers = APNsRequestHeaders(expiration: .storagePolicy)
        // The id first: every answer, including the errors below, echoes it (R-01).
        if let id = values.apnsID {
            guard Self.isCanonicalUUID(id) else { return .failure(APNsRefusal(.badMessageId)) }
            headers.apnsID = id.utf8.contains(where: Self.isUppercaseASCII) ? id.lowercased() : id
        }
        func refuse(_ reason: APNsReason) -> Result<APNsRequestHeaders, APNsRefusal> {
            .failure(APNsRefusal(reason, apnsID: headers.apnsID))
        }
        if duplicate { return refuse(.duplicateHeaders) }
        if let type = values.pushType {
            guard let pushType = APNsPushType(rawValue: type), pushType.isProviderType else { return refuse(.invalidPushType) }
            headers.pushType = pushType
        }
        if let text = values.expiration {
            guard let seconds = Int64(text.trimmingOptionalWhitespace()), seconds >= 0,
                seconds < 253_402_300_800  // year 10000
            else { return refuse(.badExpirationDate) }
            headers.expiration = seconds == 0 ? .immediately : .at(Date(timeIntervalSince1970: Double(seconds)))
        }
        if let text = values.priority {
            guard let number = Int(text), let priority = APNsPriority(rawValue: number) else {
                return refuse(.badPriority)
            }
            headers.priority = priority
        }
        if let topic = values.topic {
            guard Self.isValidTopic(topic) else { return refuse(topic.isEmpty ? .missingTopic : .badTopic) }
            headers.topic = topic
        }
        if let collapseID = values.collapseID {
            guard collapseID.utf8.count <= Self.maximumCollapseIDSize else { return refuse(.badCollapseId) }
            headers.collapseID = collapseID
        }
        if let authorization = values.authorization {
            headers.bearerToken = Self.bearerToken(fromAuthorization: authorization)
        }
        return .success(headers)
    }

    /// The JWT in an `authorization` value: the token after `bearer ` (the scheme in any case, RFC 9110 §11.1),
    /// `nil` when empty; anything else that is not empty is returned whole, as a token nobody can read.
    ///
    /// - Parameter authorization: The header's value.
    public static func bearerToken(fromAuthorization authorization: String) -> String? {
        // The scheme, then one or more spaces, then the token (split at the first run of spaces).
        let scheme = authorization.drop { $0 == " " }
        if let end = scheme.firstIndex(of: " "), sameName(String(scheme[..<end]), "bearer") {
            let rest = scheme[end...].drop { $0 == " " }
            if !rest.isEmpty {
                let token = String(rest.trimmingOptionalWhitespace())
                return token.isEmpty ? nil : token
            }
        }
        let trimmed = authorization.trimmingOptionalWhitespace()
        return trimmed.isEmpty || sameName(String(trimmed), "bearer") ? nil : authorization
    }

    /// Whether `text` is a canonical UUID: 8-4-4-4-12 hex digits (S-05; either case is read).
    public static func isCanonicalUUID(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(isCanonicalUUID)
            ?? Array(text.utf8).withUnsafeBufferPointer(isCanonicalUUID)
    }

    private static func isCanonicalUUID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, c) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard c == UInt8(ascii: "-") else { return false }
            } else {
                guard c.hexDigitValue != nil else { return false }
            }
        }
        return true
    }

    /// Whether two header names are the same, in any ASCII case.
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count
            && zip(a.utf8, b.utf8).allSatisfy {
                $0 == $1 || ($0 | 0x20 == $1 | 0x20 && ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A)
            }
    }

    private static func isUppercaseASCII(_ byte: UInt8) -> Bool {
        byte >= 0x41 && byte <= 0x5A
    }

    /// The values of the headers ``parse(_:)`` reads, the last of each name.
    private struct KnownFields {
        var apnsID: String?
        var pushType: String?
        var expiration: String?
        var priority: String?
        var topic: String?
        var collapseID: String?
        var authorization: String?

        mutating func take(_ name: String, _ value: String) {
            switch name.utf8.count {
            case 7: if sameName(name, "apns-id") { apnsID = value }
            case 10: if sameName(name, "apns-topic") { topic = value }
            case 13:
                if sameName(name, "apns-priority") {
                    priority = value
                } else if sameName(name, "authorization") {
                    authorization = value
                }
            case 14: if sameName(name, "apns-push-type") { pushType = value }
            case 15: if sameName(name, "apns-expiration") { expiration = value }
            case 16: if sameName(name, "apns-collapse-id") { collapseID = value }
            default: break
            }
        }
    }

    /// Whether `topic` can be a bundle ID with an optional push-type suffix: 1–255 characters of letters,
    /// digits, `.`, `-` and `_`, not starting or ending with a dot.
    public static func isValidTopic(_ topic: String) -> Bool {
        guard !topic.isEmpty, topic.utf8.count <= 255, !topic.hasPrefix("."), !topic.hasSuffix(".") else {
            return false
        }
        return topic.utf8.allSatisfy(\.isIdentifierByte)
    }

    /// The push type a request means: the header's, or inferred from the payload when absent.
    ///
    /// Apple only recommends the header outside watchOS (S-04); see ``APNsPushType/inferred(from:)``.
    /// - Parameter payload: The payload, read (``PayloadReading``), if any.
    public func effectivePushType(payload: PayloadReading?) -> APNsPushType {
        pushType ?? .inferred(from: payload)
    }

    /// The priority a request means: the header's, else 5 for background pushes and 10 for the rest.
    public func effectivePriority(for pushType: APNsPushType) -> APNsPriority {
        priority ?? (pushType == .background ? .throttled : .immediate)
    }
}

/// A refused request: the reason, and the `apns-id` to answer with (`nil`: generate one).
public struct APNsRefusal: Error, Sendable, Equatable {
    /// Apple's status and reason.
    public let reason: APNsReason
    /// The request's `apns-id`, when it had a valid one.
    public let apnsID: String?
    /// For 410 answers: when the token stopped being valid (R-04).
    public let timestamp: Date?

    /// Creates a refusal.
    public init(_ reason: APNsReason, apnsID: String? = nil, timestamp: Date? = nil) {
        self.reason = reason
        self.apnsID = apnsID
        self.timestamp = timestamp
    }

    /// The JSON error body APNs sends: `{"reason": …}`, plus `timestamp` in milliseconds for 410 (R-04).
    public var body: String {
        if reason.status == 410, let timestamp {
            return #"{"reason":"\#(reason.reason)","timestamp":\#(Int64(timestamp.timeIntervalSince1970 * 1000))}"#
        }
        return #"{"reason":"\#(reason.reason)"}"#
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110 §5.6.3).
    ///
    /// Foundation's `trimmingCharacters(in:)` bridges through `NSString`: on the provider API's hot path this is
    /// cheaper.
    func trimmingOptionalWhitespace() -> SubSequence {
        let isOptionalWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isOptionalWhitespace($0) }),
            let last = lastIndex(where: { !isOptionalWhitespace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }
}
