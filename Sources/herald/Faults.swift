import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

extension HeraldCommand {
    /// The gateway's fault rules, through its console's test-bed API (`/api/v1/faults`): the rules live in the gateway's
    /// process, so this command asks it.
    struct Faults: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add, list, remove and clear fault rules: make the gateway's APNs, FCM and web push doors fail on demand.",
            discussion: """
                The rules are the running gateway's (herald up, herald gateway); this command asks its console's \
                test-bed API (/api/v1/faults) with an operator token: HERALD_OPERATOR_TOKEN or --operator-token. \
                docs/faults.md says what each rule does.
                """,
            subcommands: [List.self, Add.self, Remove.self, Clear.self], defaultSubcommand: List.self)
    }
}

/// Where the console is and the operator token it takes.
struct ConsoleAPIOptions: ParsableArguments {
    @Option(help: "The console's URL (herald up's banner prints it).") var console = "http://127.0.0.1:2200"
    @Option(
        help: ArgumentHelp(
            "An operator token (herald up's banner, herald console token); default: HERALD_OPERATOR_TOKEN.",
            valueName: "token"))
    var operatorToken: String?

    /// Sends one request to the test-bed API and returns its JSON answer, or fails in one line.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The route under `/api/v1/`.
    ///   - body: The JSON body, if any.
    ///   - fieldOption: How the command line names each field of a rule, for a 400's message.
    func call(
        _ method: HTTPMethod, _ path: String, body: JSONValue? = nil, fieldOption: (String) -> String = { $0 }
    ) async throws -> (status: Int, body: JSONValue) {
        guard let token = operatorToken ?? ProcessInfo.processInfo.environment[HeraldCommand.Up.operatorTokenVariable]
        else {
            throw CommandFailure(
                "herald faults needs an operator token: set HERALD_OPERATOR_TOKEN (or pass --operator-token) to the one herald up printed."
            )
        }
        var root = console.hasSuffix("/log") ? String(console.dropLast(4)) : console
        while root.hasSuffix("/") { root.removeLast() }
        var request = HTTPClientRequest(url: root + "/api/v1/" + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body.jsonText))
        }
        let status: Int
        let answer: JSONValue
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            status = Int(response.status.code)
            let bytes = try await response.body.collect(upTo: 16 << 20)
            answer = (try? JSONValue(parsing: Data(bytes.readableBytesView))) ?? .null
        } catch {
            throw CommandFailure("Cannot reach the console at \(root) (--console): is herald up running? (\(error))")
        }
        guard (200..<300).contains(status) else {
            let message = answer["error"]?.stringValue ?? "answered \(status)"
            if let field = answer["field"]?.stringValue, !field.isEmpty {
                let detail = message.hasPrefix(field + ": ") ? String(message.dropFirst(field.count + 2)) : message
                throw CommandFailure("\(fieldOption(field)): \(detail)")
            }
            throw CommandFailure(message)
        }
        return (status, answer)
    }
}

extension HeraldCommand.Faults {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the fault rules in the order they apply, with their hits.")
        @OptionGroup var api: ConsoleAPIOptions
        @OptionGroup var output: JSONOutputOptions

        func run() async throws {
            let (_, answer) = try await api.call(.GET, "faults")
            if output.json { return output.print(answer) }
            guard case .array(let rules)? = answer["faults"], !rules.isEmpty else { return print("No fault rules.") }
            for rule in rules { print(Self.line(rule)) }
        }

        /// One rule on one line: id, door, what it matches, its effect, how often, its hits.
        static func line(_ rule: JSONValue) -> String {
            func text(_ value: JSONValue?) -> String {
                switch value {
                case .string(let text)?: text
                case .integer(let number)?: "\(number)"
                case .unsignedInteger(let number)?: "\(number)"
                case .number(let number)?: "\(number)"
                default: "-"
                }
            }
            var match: [String] = []
            if case .object(let members)? = rule["match"] {
                match = members.map { "\($0.key)=\(text($0.value))" }
            }
            var effect: [String] = []
            if let effectValue = rule["effect"] {
                if let delay = effectValue["delay"] {
                    effect.append(
                        delay.isObject ? "delay \(text(delay["min"]))–\(text(delay["max"])) s" : "delay \(text(delay)) s")
                } else if let quota = effectValue["quota"] {
                    effect.append("quota \(text(quota["requests"]))/\(text(quota["per"])) s by \(text(quota["by"]))")
                } else if let code = effectValue["rstStream"] {
                    effect.append("rstStream \(text(code))")
                } else if let reason = effectValue["goaway"] {
                    effect.append("goaway \(text(reason))")
                } else if effectValue["close"] != nil {
                    effect.append("close")
                } else if effectValue["closeBeforeSettings"] != nil {
                    effect.append("closeBeforeSettings")
                } else {
                    let reason = effectValue["reason"] ?? effectValue["errorCode"]
                    effect.append("\(text(effectValue["status"])) \(text(reason))")
                    if let retryAfter = effectValue["retryAfter"] { effect.append("retry-after \(text(retryAfter))") }
                    if let timestamp = effectValue["timestamp"] { effect.append("timestamp \(text(timestamp))") }
                }
            }
            var often = ["times \(rule["times"] == .null ? "∞" : text(rule["times"]))", "after \(text(rule["after"]))"]
            often.append("probability \(text(rule["probability"])) seed \(text(rule["seed"]))")
            if rule["ttl"] != .null { often.append("ttl \(text(rule["ttl"])) s") }
            let hits = "hits \(text(rule["hits"]))" + (rule["spent"] == .bool(true) ? " (spent)" : "")
            return [
                text(rule["id"]), text(rule["door"]), match.isEmpty ? "every request" : match.joined(separator: " "),
                effect.joined(separator: " "), often.joined(separator: " "), hits,
            ].joined(separator: "  ")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a fault rule after the others.",
            discussion: """
                Refuse with --status and/or --reason (and --retry-after, --timestamp for 410), answer late with \
                --delay, or limit with --quota; or give the whole rule as JSON with --rule (rstStream, goaway, close, \
                closeBeforeSettings). Matches every request of the door unless --token, --topic, --push-type, --bundle \
                or --path narrow it. Examples: herald faults add --token <token> --status 429 --retry-after 3 --times 1; \
                herald faults add --door fcm --reason UNAVAILABLE --times 2; herald faults add --door webpush \
                --quota 2/60
                """)
        @OptionGroup var api: ConsoleAPIOptions
        @Option(help: "The door: apns, fcm or webpush.") var door = "apns"
        @Option(help: "Only pushes to this device token.") var token: String?
        @Option(help: "Only pushes with this apns-topic.") var topic: String?
        @Option(help: "Only pushes of this apns-push-type.") var pushType: String?
        @Option(help: "Only pushes for this app's bundle ID.") var bundle: String?
        @Option(help: "Only requests to this path.") var path: String?
        @Option(help: "Refuse with this HTTP status (one the door's service documents).") var status: Int?
        @Option(help: "Refuse with this reason: APNs's or web push's (TooManyRequests, …), FCM's errorCode (UNAVAILABLE, …).")
        var reason: String?
        @Option(help: "For 410: the timestamp, milliseconds since 1970 (default: the time of the hit).") var timestamp: Int64?
        @Option(help: "Add Retry-After with these seconds.") var retryAfter: Int?
        @Option(help: ArgumentHelp("Answer late by these seconds, or by a time drawn between two.", valueName: "s|a-b"))
        var delay: String?
        @Option(help: ArgumentHelp("Admit n requests per window of s seconds, then 429 with Retry-After.", valueName: "n/s"))
        var quota: String?
        @Option(help: "What a quota counts by: token (default), topic, connection (apns) or all.") var quotaBy: String?
        @Option(help: "Hit at most this many requests (default: no limit).") var times: Int?
        @Option(help: "Let this many matching requests pass first (default 0).") var after: Int?
        @Option(help: "The chance, 0–1, that a matching request is hit (default 1).") var probability: Double?
        @Option(help: "The seed of the rule's draws (default: chosen and shown).") var seed: UInt64?
        @Option(help: "Remove the rule after these seconds (default: never).") var ttl: Double?
        @Option(help: ArgumentHelp("The whole rule as JSON, instead of the options above.", valueName: "json"))
        var rule: String?
        @OptionGroup var output: JSONOutputOptions

        /// Each rule field's option, for the API's 400.
        static let options = [
            "door": "--door", "match.token": "--token", "match.topic": "--topic", "match.pushType": "--push-type",
            "match.bundle": "--bundle", "match.path": "--path", "effect.status": "--status", "effect.reason": "--reason",
            "effect.timestamp": "--timestamp", "effect.retryAfter": "--retry-after", "effect.delay": "--delay",
            "effect.delay.min": "--delay", "effect.delay.max": "--delay", "effect.errorCode": "--reason",
            "effect.quota": "--quota", "effect.quota.requests": "--quota", "effect.quota.per": "--quota",
            "effect.quota.by": "--quota-by", "effect": "--status, --reason, --delay or --quota",
            "times": "--times", "after": "--after", "probability": "--probability", "seed": "--seed", "ttl": "--ttl",
        ]

        func validate() throws {
            let ruleOptions: [Any?] = [
                token, topic, pushType, bundle, path, status, reason, timestamp, retryAfter, delay, quota, quotaBy, times,
                after, probability, seed, ttl,
            ]
            if rule != nil, ruleOptions.contains(where: { $0 != nil }) || door != "apns" {
                throw ValidationError("--rule is the whole rule: give it alone, or the options without it")
            }
            let answers = status != nil || reason != nil || retryAfter != nil || timestamp != nil
            if rule == nil, [answers, delay != nil, quota != nil].filter({ $0 }).count > 1 {
                throw ValidationError("--status/--reason, --delay and --quota are effects of their own: give one")
            }
            if rule == nil, quotaBy != nil, quota == nil {
                throw ValidationError("--quota-by goes with --quota n/s")
            }
            if rule == nil, delay == nil, quota == nil, status == nil, reason == nil {
                throw ValidationError(
                    "say what the rule does: --status and/or --reason, --delay or --quota (or --rule JSON)")
            }
        }

        func run() async throws {
            let body: JSONValue
            if let rule {
                do {
                    body = try JSONValue(parsing: Data(rule.utf8))
                } catch {
                    throw CommandFailure("--rule is not JSON: \(error)")
                }
            } else {
                body = try ruleJSON()
            }
            let (_, answer) = try await api.call(.POST, "faults", body: body) { field in
                rule == nil ? Self.options[field] ?? field : field
            }
            if output.json { return output.print(answer) }
            print("Added \(List.line(answer))")
        }

        /// The rule the options name, as the API takes it.
        func ruleJSON() throws -> JSONValue {
            var match: [JSONValue.Member] = []
            for (key, value) in [("token", token), ("topic", topic), ("pushType", pushType), ("bundle", bundle), ("path", path)] {
                if let value { match.append(.init(key, .string(value))) }
            }
            var effect: [JSONValue.Member] = []
            if let delay {
                let bounds = delay.split(separator: "-", omittingEmptySubsequences: false)
                if bounds.count == 2, let least = Double(bounds[0]), let most = Double(bounds[1]) {
                    effect.append(.init("delay", .object([.init("min", .number(least)), .init("max", .number(most))])))
                } else if let seconds = Double(delay) {
                    effect.append(.init("delay", .number(seconds)))
                } else {
                    throw CommandFailure("--delay takes seconds (1.5) or a range (0.5-2); got \(delay)")
                }
            }
            if let quota {
                let parts = quota.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2, let requests = Int(parts[0]), let per = Double(parts[1]) else {
                    throw CommandFailure("--quota takes requests/seconds (10/60); got \(quota)")
                }
                var members: [JSONValue.Member] = [
                    .init("requests", .integer(Int64(requests))), .init("per", .number(per)),
                ]
                if let quotaBy { members.append(.init("by", .string(quotaBy))) }
                effect.append(.init("quota", .object(members)))
            }
            if let status { effect.append(.init("status", .integer(Int64(status)))) }
            if let reason { effect.append(.init(door == "fcm" ? "errorCode" : "reason", .string(reason))) }
            if let timestamp { effect.append(.init("timestamp", .integer(timestamp))) }
            if let retryAfter { effect.append(.init("retryAfter", .integer(Int64(retryAfter)))) }
            var members: [JSONValue.Member] = [.init("door", .string(door))]
            if !match.isEmpty { members.append(.init("match", .object(match))) }
            members.append(.init("effect", .object(effect)))
            if let times { members.append(.init("times", .integer(Int64(times)))) }
            if let after { members.append(.init("after", .integer(Int64(after)))) }
            if let probability { members.append(.init("probability", .number(probability))) }
            if let seed { members.append(.init("seed", .unsignedInteger(seed))) }
            if let ttl { members.append(.init("ttl", .number(ttl))) }
            return .object(members)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove one fault rule by its ID (fault-1, …).")
        @OptionGroup var api: ConsoleAPIOptions
        @Argument(help: "The rule's ID, as herald faults list shows it.") var id: String

        func run() async throws {
            let encoded = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id
            _ = try await api.call(.DELETE, "faults/\(encoded)")
            print("Removed \(id).")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every fault rule.")
        @OptionGroup var api: ConsoleAPIOptions

        func run() async throws {
            let (_, answer) = try await api.call(.DELETE, "faults")
            let deleted = answer["deleted"]?.integerValue ?? 0
            print("Removed \(deleted) fault rule\(deleted == 1 ? "" : "s").")
        }
    }
}
