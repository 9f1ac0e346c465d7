import Foundation
import HeraldCore
import Hummingbird
import NIOCore

/// An answer of the test-bed API (`/api/v1/…`): JSON, with the status it goes with.
struct APIAnswer: Error, Sendable {
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

/// A listing's answer: now, or — for a wait that has to wait — later, once what it waits for comes or its time is up.
enum APIListing: Sendable {
    /// The answer, ready.
    case now(APIAnswer)
    /// A wait: the answer is `200` and its JSON what the wait gives once it is over.
    case later(WaitingAnswer)

    /// The listing as an HTTP response. A later answer's status and headers go at once and its JSON when the wait is
    /// over. Served by ``LongRequestHandoff`` (every request that waits is), the wait is handed to it and no task waits
    /// for it; elsewhere the body waits for it. The connection closes after the answer.
    var response: Response {
        switch self {
        case .now(let answer):
            return answer.response
        case .later(let waiting):
            return Response(
                status: .ok,
                headers: [.contentType: "application/json", .cacheControl: "no-store", .connection: "close"],
                body: ResponseBody { writer in
                    if let handoff = writer as? ChannelBodyWriter {
                        handoff.hold(waiting)
                        return
                    }
                    let answer = await waiting.answer()
                    // A client that went away reads nothing.
                    guard !Task.isCancelled else { return }
                    try await writer.write(answer.bodyBuffer)
                    try await writer.finish(nil)
                })
        }
    }
}

extension APIAnswer {
    /// The answer's JSON as the body carries it: one line.
    var bodyBuffer: ByteBuffer {
        ByteBuffer(string: body.jsonText + "\n")
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
