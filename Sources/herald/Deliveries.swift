import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldGateway

extension HeraldCommand {
    /// The gateway's delivery log, every door: what `GET /api/v1/deliveries` answers, for a person or, with `--json`,
    /// for a script.
    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, show and clear the pushes the gateway accepted or refused (APNs, FCM and web push).",
            discussion: """
                The delivery log the test-bed API serves (GET /api/v1/deliveries, docs/test-bed-api.md): development \
                pushes of the last 7 days. With --json each command prints what the API answers.
                """,
            subcommands: [List.self, Show.self, Clear.self], defaultSubcommand: List.self)
    }
}

extension DeliverySentAs.Door: ExpressibleByArgument {}

/// The filters `herald deliveries list` and `clear` take: the test-bed API's, as options.
struct DeliveryFilterOptions: ParsableArguments {
    @Option(help: "Only pushes to this device token (or broadcast channel ID).") var token: String?
    @Option(help: "Only pushes with this apns-topic (bundle ID).") var topic: String?
    @Option(help: "Only pushes that came in by this door: apns, fcm or webpush.") var door: DeliverySentAs.Door?
    @Option(help: "Only pushes of this apns-push-type (alert, background, liveactivity, …).") var pushType: String?
    @Option(help: "Only pushes with this apns-collapse-id.") var collapseID: String?
    @Option(help: "Only pushes whose latest state is this, as `herald log` prints it (\"Delivered to Device\", …).")
    var state: String?
    @Option(
        help: ArgumentHelp(
            "Only pushes received at or after this RFC 3339 time, or after the push with this apns-unique-id.",
            valueName: "time|apns-unique-id"))
    var since: String?

    /// The filter these options name; a `--since` apns-unique-id is looked up in `store`.
    ///
    /// - Parameter store: The gateway's delivery log.
    func filter(in store: any DeliveryLogStore) async throws -> DeliveryFilter {
        var filter = DeliveryFilter()
        filter.token = token
        filter.topic = topic
        filter.door = door
        filter.pushType = pushType
        filter.collapseID = collapseID
        filter.state = state
        if let since, try await !filter.narrow(since: since, in: store) {
            throw CommandFailure(
                "--since takes an RFC 3339 time (2026-12-06T09:00:00Z) or the apns-unique-id of a push in the log; got \(since)"
            )
        }
        return filter
    }
}

extension HeraldCommand.Deliveries {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the pushes in the delivery log, oldest first.",
            discussion: """
                One line per push: when it was received, its apns-unique-id, door, topic, push type, token, latest \
                state and alert title. To wait for a push, ask the test-bed API (GET /api/v1/deliveries?wait=…).
                """)
        @OptionGroup var store: GatewayStoreOptions
        @OptionGroup var filters: DeliveryFilterOptions
        @Option(help: "At most this many pushes.") var limit = 100
        @OptionGroup var output: JSONOutputOptions

        func validate() throws {
            guard limit > 0 else { throw ValidationError("--limit must be 1 or more; got \(limit)") }
        }

        func run() async throws {
            let found = try await store.withExistingStore { (store: any DeliveryLogStore) in
                try await store.deliveries(try await filters.filter(in: store), limit: limit)
            }
            if output.json {
                output.print(.members(["deliveries": .array(found.map(\.testBedJSON)), "complete": true]))
                return
            }
            guard !found.isEmpty else {
                print("No pushes in the delivery log match. The log keeps development-environment pushes for 7 days.")
                return
            }
            for delivery in found {
                print(Self.line(delivery))
            }
        }

        /// One push on one line.
        static func line(_ delivery: LoggedDelivery) -> String {
            let sent = delivery.subject.sentAs
            let time = delivery.receivedAt.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            var line = "\(time)  \(delivery.uniqueID)  \((sent?.door ?? .apns).rawValue)  \(delivery.subject.topic)"
            line += "  \(sent?.pushType ?? "-")  \(delivery.subject.recipient)  \(delivery.state)"
            if let title = sent?.payload.flatMap(Self.title) { line += "  \"\(title)\"" }
            return line
        }

        /// The alert's title (or its text, for an alert given as a string).
        static func title(_ payload: String) -> String? {
            guard let alert = (try? JSONValue(reading: payload))?["aps"]?["alert"] else { return nil }
            switch alert {
            case .string(let text): return text
            case .object: if case .string(let title)? = alert["title"] { return title }
            default: break
            }
            return nil
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one push: how it was sent, its payload and every event of its delivery.")
        @OptionGroup var store: GatewayStoreOptions
        @Argument(help: "The push's apns-unique-id.") var uniqueID: String
        @OptionGroup var output: JSONOutputOptions

        func run() async throws {
            let delivery = try await findDelivery(uniqueID, in: store)
            if output.json {
                output.print(delivery.testBedJSON)
                return
            }
            let sent = delivery.subject.sentAs
            let time = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            let facts: [(String, String?)] = [
                ("apns-unique-id", delivery.uniqueID), ("apns-id", delivery.subject.apnsID),
                ("door", (sent?.door ?? .apns).rawValue), ("token", delivery.subject.recipient),
                ("topic", delivery.subject.topic), ("push type", sent?.pushType),
                ("priority", sent.map { String($0.priority) }), ("collapse id", sent?.collapseID),
                ("expiration", sent?.expiration.map(String.init)), ("fcm message", sent?.fcmMessage),
                ("received", delivery.receivedAt.formatted(time)), ("state", delivery.state),
                ("payload", sent?.payload),
            ]
            for case (let name, let value?) in facts {
                print("\(name.padding(toLength: 15, withPad: " ", startingAt: 0))\(value)")
            }
            print("events")
            for event in delivery.events {
                print("  \(event.at.formatted(time))  \(event.stateName)  \(event.detail)")
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the pushes the filters match from the delivery log (--all: every push), as between tests.",
            discussion: "Prints how many went. The running gateway keeps running; pushes it accepts later are logged.")
        @OptionGroup var store: GatewayStoreOptions
        @OptionGroup var filters: DeliveryFilterOptions
        @Flag(help: "Remove every push in the log (needed when no filter is given).") var all = false
        @OptionGroup var output: JSONOutputOptions

        func run() async throws {
            let deleted = try await store.withExistingStore { (store: any DeliveryLogStore) in
                let filter = try await filters.filter(in: store)
                guard !filter.isEmpty || all else {
                    throw CommandFailure(
                        "Name what to remove with a filter (--token, --topic, --door, …), or pass --all to clear the whole delivery log."
                    )
                }
                return try await store.deleteDeliveries(filter)
            }
            if output.json {
                output.print(.members(["deleted": .integer(Int64(deleted))]))
            } else {
                print("Removed \(deleted) \(deleted == 1 ? "push" : "pushes") from the delivery log.")
            }
        }
    }
}

/// The push with this apns-unique-id in the delivery log.
///
/// - Throws: ``CommandFailure`` saying where the log's pushes are when there is none.
func findDelivery(_ uniqueID: String, in store: GatewayStoreOptions) async throws -> LoggedDelivery {
    guard
        let delivery = try await store.withExistingStore({ (store: any DeliveryLogStore) in
            try await store.delivery(uniqueID: uniqueID)
        })
    else {
        throw CommandFailure(
            "No delivery log for \(uniqueID). The log keeps 7 days and only development-environment pushes have one; `herald deliveries list` lists them."
        )
    }
    return delivery
}
