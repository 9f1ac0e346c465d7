import Foundation
import HeraldCore
import HeraldGatewayStore
import Hummingbird
import Logging

extension ConsoleServer {
    /// The send form's fields a history entry keeps (not its CSRF token, not which button was pressed).
    static let sentFields = [
        "key", "environment", "target", "recipient", "topic", "pushType", "priority", "expiration", "collapseID", "payload",
    ]

    /// How many entries the history page lists.
    static let historyLimit = 200

    /// `GET /history`: what the console sent in the last 30 days, newest first; `POST /history/resend`: one of them sent
    /// again as it was (to change it first, the entry's "Modify" opens it in the send form).
    func historyRoutes(_ router: RouterGroup<ConsoleRequestContext>) {
        router.get("/history") { [self] _, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            return try await historyPage(session: session, message: nil)
        }
        router.post("/history/resend") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            guard let form = try await Self.form(request, context: context, checkedAgainst: session) else {
                return Self.staleForm
            }
            guard let earlier = try await store.consoleSend(id: form["id"] ?? "") else {
                return try await historyPage(session: session, message: "That send is no longer in the history (kept 30 days).")
            }
            var fields = earlier.form
            fields["action"] = "send"
            if earlier.form["kind"] == "fcm" {
                return await sendPage(session: session, form: earlier.form, values: await sendFCM(fields))
            }
            if earlier.form["kind"] == "webpush" {
                return await sendPage(session: session, form: earlier.form, values: await sendWebPush(fields))
            }
            return await sendPage(session: session, form: earlier.form, values: await send(fields))
        }
    }

    /// Keeps a send in the history with APNs' answer (or the client's reason for not sending).
    func remember(_ form: [String: String], status: Int, reason: String?, apnsID: String? = nil, uniqueID: String? = nil) async {
        let now = clock.now
        let record = ConsoleSendRecord(
            id: RandomUUID.timeOrderedLowercasedString(at: now), sentAt: now,
            form: form.filter {
                Self.sentFields.contains($0.key) || Self.sentFCMFields.contains($0.key)
                    || Self.sentWebPushFields.contains($0.key)
            }, status: status,
            reason: reason, apnsID: apnsID,
            uniqueID: uniqueID)
        do {
            try await store.addConsoleSend(record, keepingSince: now.addingTimeInterval(-ConsoleSendRecord.kept))
        } catch {
            logger.warning("Could not keep a console send in the history", metadata: ["error": "\(error)"])
        }
    }

    private func historyPage(session: ConsoleSession, message: String?) async throws -> Response {
        let sends = try await store.consoleSends(
            since: clock.now.addingTimeInterval(-ConsoleSendRecord.kept), limit: Self.historyLimit)
        let formatter = Self.timeFormatter
        var values: [String: Any] = [
            "title": "History", "csrf": session.csrf, "signedIn": true, "hasSends": !sends.isEmpty,
            "sends": sends.map { send -> [String: Any] in
                let isFCM = send.form["kind"] == "fcm"
                let isWebPush = send.form["kind"] == "webpush"
                let recipient =
                    isFCM
                    ? send.form["fcmProject"] ?? ""
                    : isWebPush
                        ? Self.webPushEndpoint(in: send.form["webPushSubscription"] ?? "") ?? "" : send.form["recipient"] ?? ""
                var row: [String: Any] = [
                    "id": send.id, "time": formatter.string(from: send.sentAt), "csrf": session.csrf,
                    "target": isFCM
                        ? "FCM project"
                        : isWebPush ? "web push subscription" : send.form["target"] == "channel" ? "channel" : "token",
                    "recipient": recipient.count > 16 ? recipient.prefix(16) + "…" : recipient,
                    "fullRecipient": recipient, "topic": isWebPush ? send.form["webPushTopic"] ?? "" : send.form["topic"] ?? "",
                    "pushType": isWebPush ? "webpush" : send.form["pushType"] ?? "",
                    "status": send.status == 0 ? "no answer" : "\(send.status)", "reason": send.reason ?? "",
                    "kind": send.status == 200 || (isWebPush && send.status == 201) ? "delivered" : "discarded",
                ]
                // An FCM message's log is found by its ID, the push's apns-id (every push of a topic message has it).
                if let uniqueID = send.uniqueID ?? (isFCM ? send.apnsID : nil) { row["uniqueID"] = uniqueID }
                return row
            },
        ]
        if let message { values["message"] = message }
        return Self.page("history", values)
    }
}
