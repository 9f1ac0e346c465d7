import NIOCore
import NIOHPACK
import NIOHTTP2

/// A request as one HTTP/2 stream's frames make it: its first HEADERS block starts it, DATA frames add to its body.
protocol StreamRequest {
    /// The request a HEADERS block starts.
    init(head: HPACKHeaders)

    /// Adds the next piece of the body.
    mutating func appendBody(_ bytes: ByteBuffer)
}

/// Reads a request from one HTTP/2 stream's frames — the one reading both ports' stream handlers share
/// (``ProviderStreamHandler``, ``FCMStreamHandler``).
///
/// The first HEADERS block is the request's head; a later one (trailers) only ends it. DATA frames add to its body. The
/// frame that ends the stream completes it, once: what comes after is ignored.
struct StreamRequestReader<Request: StreamRequest> {
    /// What a frame came to.
    enum Outcome {
        /// The request goes on (or the frame is not part of one).
        case reading
        /// The stream ended: its request, whole.
        case complete(Request)
        /// The stream ended before any HEADERS block: there is no request to answer.
        case endedWithoutRequest
    }

    private var request: Request?
    /// Whether the stream's request has ended (answered or not).
    private(set) var isComplete = false

    /// Reads one of the stream's frames.
    mutating func read(_ frame: HTTP2Frame.FramePayload) -> Outcome {
        guard !isComplete else { return .reading }
        switch frame {
        case .headers(let headers):
            if request == nil { request = Request(head: headers.headers) }
            return headers.endStream ? complete() : .reading
        case .data(let data):
            if case .byteBuffer(let bytes) = data.data { request?.appendBody(bytes) }
            return data.endStream ? complete() : .reading
        default:
            return .reading
        }
    }

    private mutating func complete() -> Outcome {
        isComplete = true
        defer { request = nil }
        return request.map { .complete($0) } ?? .endedWithoutRequest
    }
}
