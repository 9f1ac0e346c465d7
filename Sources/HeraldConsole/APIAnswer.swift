import Foundation
import HeraldCore
import Hummingbird
import NIOCore

/// An answer of the test-bed API (`/api/v1/…`): JSON, with the status it goes with.
struct APIAnswer: Error {
    /// The HTTP status.
    var status: HTTPResponse.Status
    /// The body.
    var body: JSONValue
    /// Whether the connection closes after this answer (`Connection: close`, so that a client's pool does not send
    /// its next request on it): after a wait, which watches the connection for the client leaving.
    var closesConnection = false

    /// An error: `{"error": "<one line>", "parameter": "<the one at fault>"}`.
    ///
    /// - Parameters:
    ///   - status: The HTTP status (400, 401, 404, 503…).
    ///   - message: What is wrong, in one line.
    ///   - parameter: The query parameter, path segment or header at fault, if one is.
    static func error(_ status: HTTPResponse.Status, _ message: String, parameter: String? = nil) -> APIAnswer {
        var members = [JSONValue.Member("error", .string(message))]
        if let parameter { members.append(.init("parameter", .string(parameter))) }
        return APIAnswer(status: status, body: .object(members))
    }

    /// The answer as an HTTP response.
    var response: Response {
        var text = body.jsonText
        text.append("\n")
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if status == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="herald""# }
        if closesConnection { headers[.connection] = "close" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

extension JSONValue {
    /// A time as the test-bed API writes it: RFC 3339, UTC, to the millisecond.
    ///
    /// - Parameter date: The time.
    public static func time(_ date: Date) -> JSONValue {
        .string(date.formatted(APIAnswer.timeFormat))
    }
}

extension APIAnswer {
    /// RFC 3339 with milliseconds, UTC.
    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
