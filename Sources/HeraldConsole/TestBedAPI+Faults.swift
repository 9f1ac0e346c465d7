import Foundation
import HeraldCore
import HeraldFaults
import Hummingbird
import Logging
import NIOCore

/// The test-bed API's fault rules (`/api/v1/faults`): make the gateway's doors fail the way APNs does, on demand.
extension TestBedAPI {
    /// The largest rule a client may send, in bytes.
    static let largestFaultRule = 64 * 1024

    func faultRoutes(_ api: RouterGroup<ConsoleRequestContext>) {
        api.get("faults") { [self] request, _ in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                _ = try APIQuery(request, allowed: [])
                let book = try faultBook()
                return APIAnswer(status: .ok, body: .members(["faults": .array(book.rules(now: clock.now).map(\.json))]))
            }
        }
        api.post("faults") { [self] request, _ in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                _ = try APIQuery(request, allowed: [])
                let book = try faultBook()
                let draft = try await Self.faultRule(request)
                let rule = book.add(draft, now: clock.now)
                logger.info("Test-bed API: fault rule added", metadata: ["fault": "\(rule.id)", "door": "\(rule.door)"])
                return APIAnswer(status: .created, body: rule.json)
            }
        }
        api.delete("faults") { [self] request, _ in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                _ = try APIQuery(request, allowed: [])
                let deleted = try faultBook().removeAll()
                logger.info("Test-bed API: fault rules removed", metadata: ["deleted": "\(deleted)"])
                return APIAnswer(status: .ok, body: .members(["deleted": .integer(Int64(deleted))]))
            }
        }
        api.delete("faults/:id") { [self] request, context in
            await answering { () async throws(APIAnswer) -> APIAnswer in
                try await authorize(request)
                _ = try APIQuery(request, allowed: [])
                let id = context.parameters.get("id") ?? ""
                guard try faultBook().remove(id: id) else {
                    throw .error(.notFound, "no fault rule has id \(id) (GET /api/v1/faults lists them)", parameter: "id")
                }
                logger.info("Test-bed API: fault rule removed", metadata: ["fault": "\(id)"])
                return APIAnswer(status: .ok, body: .members(["deleted": .integer(1)]))
            }
        }
    }

    /// The gateway's fault rules.
    ///
    /// - Throws: ``APIAnswer`` 404 where no gateway runs beside the API (a device's own API).
    func faultBook() throws(APIAnswer) -> FaultBook {
        guard let faults else {
            throw .error(
                .notFound,
                "no gateway runs beside this API: fault rules are the gateway's, at its console's /api/v1/faults")
        }
        return faults
    }

    /// The rule in a request's body, checked.
    ///
    /// - Throws: ``APIAnswer`` 400 naming the field at fault (`{"error": …, "field": …}`), or 413 for a body too large.
    static func faultRule(_ request: Request) async throws(APIAnswer) -> FaultRule.Draft {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: largestFaultRule)
        } catch {
            throw .error(.contentTooLarge, "a fault rule is at most \(largestFaultRule) bytes of JSON")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Data(body.readableBytesView))
        } catch {
            throw .error(
                .badRequest,
                #"the body is not JSON: send a rule such as {"door": "apns", "effect": {"status": 429}} (\#(error))"#)
        }
        do {
            return try FaultRule.Draft(json: json)
        } catch {
            throw APIAnswer(
                status: .badRequest,
                body: .object([
                    .init("error", .string(error.description)),
                    .init("field", .string(error.field)),
                ]))
        }
    }
}
