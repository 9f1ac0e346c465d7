import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldFCM
import HeraldGatewayStore
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

extension ConsoleServer {
    /// The FCM form's fields a history entry keeps.
    static let sentFCMFields = ["kind", "fcmProject", "fcmRequest"]

    /// The FCM part of the send page: the projects to send as, the request as last sent (or an example to the first
    /// registration the project has), and `form`'s choice kept.
    func fcmFormValues(_ form: [String: String]) async -> [String: Any] {
        guard let sender, await sender.fcmURL() != nil else { return [:] }
        let projects = await sender.fcmProjectIDs()
        let chosen = form["fcmProject"] ?? projects.first ?? ""
        var request = form["fcmRequest"]
        if request == nil {
            let token = (try? await gateway.fcmRegistrations(projectID: chosen))?.first?.token ?? "REGISTRATION_TOKEN"
            request =
                JSONValue.object([
                    .init(
                        "message",
                        .object([
                            .init("token", .string(token)),
                            .init(
                                "notification",
                                .object([.init("title", "Hello"), .init("body", "from the console, through FCM")])),
                        ]))
                ]).jsonText
        }
        return [
            "hasFCM": true, "noFCMProjects": projects.isEmpty,
            "fcmProjects": projects.map { ["id": $0, "selected": $0 == chosen] as [String: Any] },
            "fcmRequest": request ?? "",
        ]
    }

    /// Sends the FCM form's request as firebase-admin would: an access token from the gateway's token endpoint for an
    /// assertion signed with the project's key file, then `messages:send` with it. The values the page shows.
    func sendFCM(_ form: [String: String]) async -> [String: Any] {
        guard let sender, let base = await sender.fcmURL() else {
            return ["fcmMessage": "This gateway serves no FCM (herald gateway --fcm-port)."]
        }
        let projectID = form["fcmProject"] ?? ""
        guard let keyFile = await sender.fcmKeyFile(projectID) else {
            return [
                "fcmMessage":
                    "No key file for the project \(projectID): it belongs in the data directory as fcm/\(projectID).json (herald fcm project create writes it there)."
            ]
        }
        let key: FCMServiceAccountKey
        do {
            key = try FCMServiceAccountKey(keyFile: keyFile)
        } catch {
            return ["fcmMessage": "fcm/\(projectID).json: \(error)"]
        }
        let body = Data((form["fcmRequest"] ?? "").utf8)
        let root = base.textWithoutTrailingSlashes
        let client = HTTPClient.shared
        let outcome: Result<(status: Int, body: JSONValue), any Error>
        do {
            let grant = try await Self.post(
                root + "/token", body: try key.tokenRequestBody(now: clock.now),
                contentType: "application/x-www-form-urlencoded", bearer: nil, client: client)
            if grant.status == 200, case .string(let accessToken)? = grant.body["access_token"] {
                outcome = .success(
                    try await Self.post(
                        root + "/v1/projects/\(projectID)/messages:send", body: body,
                        contentType: "application/json", bearer: accessToken, client: client))
            } else {
                outcome = .success(grant)
            }
        } catch {
            outcome = .failure(error)
        }
        var fields = form
        fields["kind"] = "fcm"
        switch outcome {
        case .failure(let error):
            await remember(fields, status: 0, reason: "\(error)")
            return ["fcmMessage": "Not sent: \(error)"]
        case .success(let answer):
            var result: [String: Any] = [
                "status": "\(answer.status)", "kind": answer.status == 200 ? "delivered" : "discarded",
            ]
            var messageID: String?
            if case .string(let name)? = answer.body["name"] {
                result["name"] = name
                if let id = Self.fcmMessageID(named: name), id != "fake_message_id" {
                    messageID = id
                    result["messageID"] = id
                }
            }
            let reason = Self.fcmErrorSummary(answer.body)
            if let reason { result["reason"] = reason }
            await remember(fields, status: answer.status, reason: reason, apnsID: messageID)
            logger.info(
                "Console sent an FCM message", metadata: ["fcm.project": "\(projectID)", "fcm.status": "\(answer.status)"])
            return ["fcmResult": result]
        }
    }

    /// The ID in an FCM message's name, `projects/<project>/messages/<id>`; `nil` for anything else.
    static func fcmMessageID(named name: String) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "projects", parts[2] == "messages", !parts[1].isEmpty, !parts[3].isEmpty
        else { return nil }
        return String(parts[3])
    }

    /// Google's error as one line: its `status`, FCM's `errorCode` when there is one, and its message.
    static func fcmErrorSummary(_ body: JSONValue) -> String? {
        if case .string(let error)? = body["error"] {
            // The token endpoint's OAuth 2 error.
            if case .string(let description)? = body["error_description"] { return "\(error): \(description)" }
            return error
        }
        guard let error = body["error"] else { return nil }
        var parts: [String] = []
        if case .string(let status)? = error["status"] { parts.append(status) }
        if case .array(let details)? = error["details"] {
            for case .string(let code)? in details.map({ $0["errorCode"] }) where !parts.contains(code) { parts.append(code) }
        }
        if case .string(let message)? = error["message"] { parts.append("— \(message)") }
        return parts.joined(separator: " ")
    }

    /// One POST to the FCM port: its status and JSON body (`null` for a body that is not JSON).
    private static func post(
        _ url: String, body: Data, contentType: String, bearer: String?, client: HTTPClient
    ) async throws -> (status: Int, body: JSONValue) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: contentType)
        if let bearer { request.headers.add(name: "authorization", value: "Bearer \(bearer)") }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONValue(parsing: Data(bytes.readableBytesView))) ?? .null)
    }
}
