import Foundation
import HeraldCore
import HeraldGatewayStore

extension LoggedDelivery {
    /// The delivery as the test-bed API writes it (`GET /api/v1/deliveries`), and `herald deliveries --json` prints
    /// it: its sent-as facts, payload as a JSON object, latest state and every event.
    public var testBedJSON: JSONValue {
        let sent = subject.sentAs
        var payload = JSONValue.null
        if let text = sent?.payload { payload = JSONValue(jsonOrString: text) }
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        let timeline = events.map { event -> JSONValue in
            .object([
                .init("state", .string(event.stateName)), .init("at", .time(event.at)),
                .init("kind", .string(event.kind.rawValue)), .init("detail", .string(event.detail)),
            ])
        }
        return .object([
            .init("uniqueID", .string(uniqueID)),
            .init("apnsID", .string(subject.apnsID)),
            .init("door", .string((sent?.door ?? .apns).rawValue)),
            .init("token", .string(subject.recipient)),
            .init("topic", .string(subject.topic)),
            .init("pushType", optional(sent?.pushType)),
            .init("priority", sent.map { .integer(Int64($0.priority)) } ?? .null),
            .init("collapseID", optional(sent?.collapseID)),
            .init("expiration", sent?.expiration.map(JSONValue.integer) ?? .null),
            .init("payload", payload),
            .init("fcmMessage", optional(sent?.fcmMessage)),
            .init("receivedAt", .time(receivedAt)),
            .init("state", .string(state)),
            .init("events", .array(timeline)),
        ])
    }
}
