import HeraldCore
import HeraldFaults
import NIOCore

/// One provider-API request as the gateway checks it, whichever HTTP version carried it.
struct ProviderRequest: Sendable {
    /// The method, upper case (`POST`).
    var method: String
    /// The path without query (`/3/device/<token>`).
    var path: String
    /// The header fields in order, names lower-cased, pseudo-headers left out.
    var fields: [(name: String, value: String)]
    /// The body, up to ``ProviderAPIResponder/largestPayload`` bytes.
    var payload = ByteBuffer()
    /// Whether the body was longer than ``ProviderAPIResponder/largestPayload`` (the rest was dropped).
    var payloadTooLarge = false

    /// The request's `apns-id` as an answer echoes it before the headers are checked: lower-cased when it is a
    /// canonical UUID, `nil` otherwise (the answer then gets a new one).
    var echoedAPNsID: String? {
        guard let supplied = fields.first(where: { $0.name == "apns-id" })?.value,
            APNsRequestHeaders.isCanonicalUUID(supplied)
        else { return nil }
        return supplied.lowercased()
    }

    /// Adds the next piece of the body. Past ``ProviderAPIResponder/largestPayload`` bytes the body is only marked
    /// too large and the rest dropped: the request is read to its end, its size already decided.
    mutating func appendPayload(_ chunk: ByteBuffer) {
        guard !payloadTooLarge, payload.readableBytes + chunk.readableBytes <= ProviderAPIResponder.largestPayload else {
            payloadTooLarge = true
            return
        }
        var chunk = chunk
        payload.writeBuffer(&chunk)
    }
}

/// The gateway's answer to one provider-API request.
struct ProviderAnswer: Sendable {
    /// The HTTP status.
    var status: Int
    /// Response header fields (lower-case names).
    var fields: [(name: String, value: String)]
    /// The JSON error body, empty for 200.
    var body: ByteBuffer
    /// Whether the request carried a valid provider token (lifts the one-stream limit, H-05/H-23).
    var authenticated: Bool
    /// Why the request was refused, for a refusal.
    var refusal: APNsRefusal? = nil
    /// What a fault rule puts in the answer's place on the connection, if one does (docs/faults.md).
    var transportFault: TransportFault? = nil
    /// The fault rule's hit that refused the request, if one did: the FCM door answers it in FCM's words.
    var fault: FaultHit? = nil

    /// A fault rule's effect on the connection instead of an answer.
    enum TransportFault: Sendable, Equatable {
        /// The stream reset with this HTTP/2 error code.
        case resetStream(UInt32)
        /// A GOAWAY with `{"reason": …}` and its last-stream-id below the request's stream, then a graceful close.
        case goAway(APNsReason)
        /// The connection closed at once, the request unanswered.
        case close
    }
}

extension ProviderAnswer {
    /// The answer to an accepted push: 200 with its `apns-id`, and its `apns-unique-id` in the development
    /// environment only.
    ///
    /// - Parameters:
    ///   - apnsID: The notification's `apns-id`.
    ///   - uniqueID: The gateway's `apns-unique-id` for it.
    ///   - environment: The environment of the listener the request came in on.
    static func accepted(apnsID: String, uniqueID: String, environment: APNsEnvironment) -> ProviderAnswer {
        var fields = [(name: "apns-id", value: apnsID)]
        if environment == .development { fields.append((name: "apns-unique-id", value: uniqueID)) }
        return ProviderAnswer(status: 200, fields: fields, body: ByteBuffer(), authenticated: true)
    }

    /// The answer to a refused request: the status, `apns-id` (the request's, or a new one) and the JSON reason
    ///
    ///
    /// - Parameter refusal: Why the request is refused.
    init(refusal: APNsRefusal) {
        let body = ByteBuffer(string: refusal.body)
        self.init(
            status: refusal.reason.status,
            fields: [
                (name: "apns-id", value: refusal.apnsID ?? RandomUUID.lowercasedString()),
                (name: "content-type", value: "application/json"),
                (name: "content-length", value: String(body.readableBytes)),
            ],
            body: body, authenticated: false, refusal: refusal)
    }
}
