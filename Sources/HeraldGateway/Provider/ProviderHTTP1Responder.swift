import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The provider API over HTTP/1.1 (the plaintext listener's fallback for clients that test without HTTP/2):
/// reads a Hummingbird request and hands it to the ``ProviderAPIResponder``.
struct ProviderHTTP1Responder: HTTPResponder {
    typealias Context = ProviderRequestContext

    let responder: ProviderAPIResponder
    let connections: ProviderConnectionRegistry

    func respond(to request: Request, context: Context) async throws -> Response {
        var providerRequest = ProviderRequest(
            method: request.method.rawValue, path: request.uri.path,
            fields: request.headers.map { (name: $0.name.canonicalName, value: $0.value) })
        for try await chunk in request.body { providerRequest.appendPayload(chunk) }
        let answer: ProviderAnswer
        if let connection = connections.connection(ObjectIdentifier(context.channel)) {
            answer = await responder.answer(providerRequest, connection: connection, logger: context.logger)
        } else {
            context.logger.error("A request came on a connection the gateway does not know")
            answer = ProviderAnswer(status: 500, fields: [], body: ByteBuffer(), authenticated: false)
        }
        var headers = HTTPFields()
        for field in answer.fields {
            if let name = HTTPField.Name(field.name) { headers.append(HTTPField(name: name, value: field.value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers, body: .init(byteBuffer: answer.body))
    }
}
