import Foundation
import HeraldCore
import HeraldFaults
import Hummingbird
import Logging

extension ConsoleServer {
    /// `GET /faults`: the gateway's fault rules with their hits (docs/faults.md); `POST /faults` adds one (its JSON, as
    /// `POST /api/v1/faults` takes it), `POST /faults/delete` removes one, `POST /faults/clear` all.
    func faultRoutes(_ router: RouterGroup<ConsoleRequestContext>) {
        router.get("/faults") { [self] _, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            return faultsPage(session: session, rule: Self.exampleFaultRule, message: nil)
        }
        router.post("/faults") { [self] request, context in
            try await changeFaults(request, context: context) { book, form in
                let text = form["rule"] ?? ""
                let json: JSONValue
                do {
                    json = try JSONValue(parsing: Data(text.utf8))
                } catch {
                    return (text, "The rule is not JSON: \(error)")
                }
                let draft: FaultRule.Draft
                do {
                    draft = try FaultRule.Draft(json: json)
                } catch let error as FaultRuleError {
                    return (text, error.description)
                } catch {
                    return (text, "\(error)")
                }
                let rule = book.add(draft, now: clock.now)
                logger.info("Console added a fault rule", metadata: ["fault": "\(rule.id)"])
                return (text, nil)
            }
        }
        router.post("/faults/delete") { [self] request, context in
            try await changeFaults(request, context: context) { book, form in
                let id = form["id"] ?? ""
                guard book.remove(id: id) else { return (nil, "No fault rule \(id).") }
                logger.info("Console removed a fault rule", metadata: ["fault": "\(id)"])
                return (nil, nil)
            }
        }
        router.post("/faults/clear") { [self] request, context in
            try await changeFaults(request, context: context) { book, _ in
                book.removeAll()
                return (nil, nil)
            }
        }
    }

    /// What the add form starts with: a rule a provider's retry code can be tried against.
    static let exampleFaultRule = #"{"door": "apns", "effect": {"status": 429, "retryAfter": 3}, "times": 1}"#

    /// The rules page, with `rule` in the add form and `message` above it.
    private func faultsPage(session: ConsoleSession, rule: String, message: String?) -> Response {
        var values: [String: Any] = [
            "title": "Faults", "csrf": session.csrf, "signedIn": true, "rule": rule,
        ]
        if let message { values["message"] = message }
        guard let book = api.faults else {
            values["noGateway"] = true
            return Self.page("faults", values)
        }
        let rules = book.rules(now: clock.now)
        values["hasRules"] = !rules.isEmpty
        values["rules"] = rules.map { rule -> [String: Any] in
            let json = rule.json
            var often = [rule.times.map { "\($0) times" } ?? "every time"]
            if rule.after > 0 { often.append("after \(rule.after)") }
            if rule.probability < 1 { often.append("probability \(rule.probability) (seed \(rule.seed))") }
            if let expiresAt = rule.expiresAt { often.append("until \(expiresAt.formatted(.iso8601))") }
            return [
                "id": rule.id, "door": rule.door.rawValue, "match": json["match"]?.jsonText ?? "{}",
                "effect": json["effect"]?.jsonText ?? "", "often": often.joined(separator: ", "), "hits": rule.hits,
                "spent": rule.isSpent, "csrf": session.csrf,
            ]
        }
        return Self.page("faults", values)
    }

    /// Runs a change of the rules from a signed-in person's form, then shows the page: with the rule text to keep in
    /// the form and the message `change` returns.
    private func changeFaults(
        _ request: Request, context: ConsoleRequestContext,
        _ change: (FaultBook, [String: String]) async throws -> (rule: String?, message: String?)
    ) async throws -> Response {
        guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
        guard let form = try await Self.form(request, context: context, checkedAgainst: session) else { return Self.staleForm }
        guard let book = api.faults else { return faultsPage(session: session, rule: Self.exampleFaultRule, message: nil) }
        let (rule, message) = try await change(book, form)
        // A rule that was refused stays in the form to be fixed; one that was added leaves the example there.
        return faultsPage(
            session: session, rule: message == nil ? Self.exampleFaultRule : rule ?? Self.exampleFaultRule, message: message)
    }
}
