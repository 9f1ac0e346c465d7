import Foundation
import HeraldCore

extension FaultRule {
    /// A rule as a client asks for it, checked, before the book gives it an ID.
    public struct Draft: Sendable, Equatable {
        /// The door.
        public var door: FaultDoor
        /// Which requests.
        public var match = FaultMatch()
        /// What it does.
        public var effect: FaultEffect
        /// How many hits; `nil`: no limit.
        public var times: Int?
        /// How many matching requests pass first.
        public var after = 0
        /// The chance of a hit.
        public var probability = 1.0
        /// The seed; `nil`: chosen at random.
        public var seed: UInt64?
        /// Seconds until it removes itself; `nil`: never.
        public var ttl: Double?

        /// A draft of these values.
        public init(door: FaultDoor, effect: FaultEffect) {
            self.door = door
            self.effect = effect
        }
    }

    /// How the API writes a time: RFC 3339 with milliseconds, as the rest of the test-bed API.
    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    /// The fields a rule may have.
    static let fields = ["door", "match", "effect", "times", "after", "probability", "seed", "ttl"]
    /// The fields an effect may have: the effects, and what an answer (`status`) has besides.
    static let effectFields = [
        "status", "reason", "errorCode", "timestamp", "retryAfter", "delay", "rstStream", "goaway", "close",
        "closeBeforeSettings", "quota",
    ]
    /// The effects that are a whole effect on their own.
    static let soleEffects = ["delay", "rstStream", "goaway", "close", "closeBeforeSettings", "quota"]
    /// The longest quota window, in seconds: a day.
    static let longestQuotaWindow = 86_400.0
    /// A reason for each APNs status whose rule names none.
    static let defaultReasons: [Int: APNsReason] = [
        404: .badPath, 405: .methodNotAllowed, 410: .unregistered, 413: .payloadTooLarge, 429: .tooManyRequests,
        500: .internalServerError, 503: .serviceUnavailable,
    ]

    /// The rule as the API shows it: every field, defaults included, with its ID, hits and whether it is spent.
    public var json: JSONValue {
        var members: [JSONValue.Member] = [
            .init("id", .string(id)), .init("door", .string(door.rawValue)), .init("match", match.json),
            .init("effect", effect.json(door: door)), .init("times", times.map { .integer(Int64($0)) } ?? .null),
            .init("after", .integer(Int64(after))), .init("probability", .number(probability)),
            .init("seed", .unsignedInteger(seed)), .init("ttl", ttl.map { .number($0) } ?? .null),
            .init("addedAt", .string(addedAt.formatted(Self.timeFormat))),
        ]
        if let expiresAt { members.append(.init("expiresAt", .string(expiresAt.formatted(Self.timeFormat)))) }
        members.append(.init("hits", .integer(Int64(hits))))
        members.append(.init("spent", .bool(isSpent)))
        return .object(members)
    }
}

extension FaultRule.Draft {
    /// Reads a rule from the API's JSON, every field checked.
    ///
    /// - Parameter json: The request's body.
    /// - Throws: ``FaultRuleError`` naming the first field at fault.
    public init(json: JSONValue) throws(FaultRuleError) {
        guard case .object(let members) = json else { throw FaultRuleError(field: "", "a rule is a JSON object") }
        for member in members where !FaultRule.fields.contains(member.key) {
            throw FaultRuleError(
                field: member.key, "unknown field; a rule has \(FaultRule.fields.joined(separator: ", "))")
        }
        guard let doorValue = json["door"] else {
            throw FaultRuleError(field: "door", "required: apns, fcm or webpush")
        }
        guard let name = doorValue.stringValue, let door = FaultDoor(rawValue: name) else {
            throw FaultRuleError(field: "door", "must be apns, fcm or webpush")
        }
        guard let effect = json["effect"] else { throw FaultRuleError(field: "effect", "required") }
        self.init(door: door, effect: try Self.effect(effect, door: door))
        if let match = json["match"], match != .null {
            self.match = try Self.match(match)
            if self.effect.isConnectionLevel, self.match != FaultMatch() {
                throw FaultRuleError(
                    field: "match", "a connection that opens has no token, topic or path yet: leave match out")
            }
        }
        if let times = try Self.integer(json["times"], "times", atLeast: 1) { self.times = times }
        if let after = try Self.integer(json["after"], "after", atLeast: 0) { self.after = after }
        if let value = json["probability"], value != .null {
            guard let probability = value.doubleValue, (0...1).contains(probability) else {
                throw FaultRuleError(field: "probability", "must be a number from 0 to 1")
            }
            if case .quota = self.effect, probability != 1 {
                throw FaultRuleError(field: "probability", "a quota counts every request it matches: leave probability out")
            }
            self.probability = probability
        }
        if let value = json["seed"], value != .null {
            switch value {
            case .integer(let seed) where seed >= 0: self.seed = UInt64(seed)
            case .unsignedInteger(let seed): self.seed = seed
            default: throw FaultRuleError(field: "seed", "must be a whole number from 0 to 18446744073709551615")
            }
        }
        if let value = json["ttl"], value != .null {
            guard let ttl = value.doubleValue, ttl > 0, ttl.isFinite else {
                throw FaultRuleError(field: "ttl", "must be a number of seconds above 0")
            }
            self.ttl = ttl
        }
    }

    /// The fields a listing shows that a rule does not take: what the book gave it.
    static let shownOnly: Set<String> = ["id", "addedAt", "expiresAt", "hits", "spent"]

    /// Reads the rules of a file (`herald up --faults FILE`): an array of rules, or what `GET /api/v1/faults` answers
    /// (`{"faults": [...]}`, the fields the book gave each rule — `id`, `hits`, … — left out), or one rule.
    ///
    /// - Parameter json: The file's JSON.
    /// - Throws: ``FaultRuleError`` naming the rule and its field (`faults[2].effect.status`).
    public static func list(json: JSONValue) throws(FaultRuleError) -> [FaultRule.Draft] {
        let rules: [JSONValue]
        let prefix: String
        switch json {
        case .array(let values):
            (rules, prefix) = (values, "")
        case .object(let members) where members.contains(where: { $0.key == "faults" }):
            guard members.count == 1, case .array(let values)? = json["faults"] else {
                throw FaultRuleError(field: "faults", #"a file of rules is [rule, …] or {"faults": [rule, …]}"#)
            }
            (rules, prefix) = (values, "faults")
        case .object:
            return [try FaultRule.Draft(json: json)]
        default:
            throw FaultRuleError(field: "", #"a file of rules is [rule, …], {"faults": [rule, …]} or one rule"#)
        }
        var drafts: [FaultRule.Draft] = []
        for (index, rule) in rules.enumerated() {
            var rule = rule
            if case .object(let members) = rule { rule = .object(members.filter { !shownOnly.contains($0.key) }) }
            do {
                drafts.append(try FaultRule.Draft(json: rule))
            } catch {
                let place = "\(prefix)[\(index)]"
                throw FaultRuleError(field: error.field.isEmpty ? place : "\(place).\(error.field)", error.message)
            }
        }
        return drafts
    }

    private static func integer(_ value: JSONValue?, _ field: String, atLeast least: Int) throws(FaultRuleError) -> Int? {
        guard let value, value != .null else { return nil }
        guard case .integer = value, let number = value.integerValue, number >= least else {
            throw FaultRuleError(field: field, "must be a whole number of at least \(least)")
        }
        return number
    }

    private static func match(_ json: JSONValue) throws(FaultRuleError) -> FaultMatch {
        guard case .object(let members) = json else {
            throw FaultRuleError(field: "match", "must be an object of \(FaultMatch.fields.joined(separator: ", "))")
        }
        var values: [String: String] = [:]
        for member in members {
            guard FaultMatch.fields.contains(member.key) else {
                throw FaultRuleError(
                    field: "match.\(member.key)", "unknown field; a match has \(FaultMatch.fields.joined(separator: ", "))")
            }
            guard let text = member.value.stringValue, !text.isEmpty else {
                throw FaultRuleError(field: "match.\(member.key)", "must be a non-empty string")
            }
            values[member.key] = text
        }
        if let pushType = values["pushType"], APNsPushType(rawValue: pushType) == nil {
            throw FaultRuleError(field: "match.pushType", "not a push type APNs knows: \(pushType)")
        }
        return FaultMatch(
            token: values["token"], topic: values["topic"], pushType: values["pushType"], bundle: values["bundle"],
            path: values["path"])
    }

    private static func effect(_ json: JSONValue, door: FaultDoor) throws(FaultRuleError) -> FaultEffect {
        guard case .object(let members) = json, !members.isEmpty else {
            throw FaultRuleError(
                field: "effect",
                #"must be an object: {"status": 429}, {"delay": 2}, {"rstStream": "INTERNAL_ERROR"}, {"goaway": "Shutdown"}, {"close": true}, {"closeBeforeSettings": true} or {"quota": {"requests": 10, "per": 60}}"#
            )
        }
        for member in members {
            guard FaultRule.effectFields.contains(member.key) else {
                throw FaultRuleError(
                    field: "effect.\(member.key)",
                    "unknown effect; one of status (with \(door.reasonField), retryAfter\(door == .apns ? ", timestamp" : "")), \(door.effects.dropFirst().joined(separator: ", "))"
                )
            }
            if FaultRule.soleEffects.contains(member.key), let refusal = door.refusal(of: member.key) {
                throw FaultRuleError(field: "effect.\(member.key)", refusal)
            }
        }
        guard let sole = members.first(where: { FaultRule.soleEffects.contains($0.key) }) else {
            return .answer(try Self.answer(json, door: door))
        }
        if let other = members.first(where: { $0.key != sole.key }) {
            throw FaultRuleError(field: "effect.\(other.key)", "\(sole.key) is an effect of its own; add another rule")
        }
        let field = "effect.\(sole.key)"
        switch sole.key {
        case "delay":
            return .delay(try Self.delay(sole.value))
        case "quota":
            return .quota(try Self.quota(sole.value, door: door))
        case "rstStream":
            guard let code = sole.value.stringValue, FaultEffect.http2ErrorCodes[code] != nil else {
                throw FaultRuleError(field: field, "must be an HTTP/2 error code: INTERNAL_ERROR, REFUSED_STREAM, CANCEL, …")
            }
            return .resetStream(code: code)
        case "goaway":
            guard let reason = sole.value.stringValue, APNsReason.named(reason) != nil else {
                throw FaultRuleError(field: field, "must be a reason APNs documents, for its GOAWAY's data: Shutdown, …")
            }
            return .goAway(reason: reason)
        default:
            guard sole.value == .bool(true) else { throw FaultRuleError(field: field, "must be true") }
            return sole.key == "close" ? .close : .closeBeforeSettings
        }
    }

    private static func quota(_ json: JSONValue, door: FaultDoor) throws(FaultRuleError) -> FaultQuota {
        let scopes = FaultQuota.Scope.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .object(let members) = json else {
            throw FaultRuleError(
                field: "effect.quota", #"must be an object: {"requests": 10, "per": 60, "by": "token"}"#)
        }
        for member in members where !["requests", "per", "by"].contains(member.key) {
            throw FaultRuleError(field: "effect.quota.\(member.key)", "unknown field; a quota has requests, per and by")
        }
        guard let requests = try integer(json["requests"], "effect.quota.requests", atLeast: 1) else {
            throw FaultRuleError(field: "effect.quota.requests", "required: how many requests a window admits")
        }
        guard let per = json["per"]?.doubleValue, per > 0, per <= FaultRule.longestQuotaWindow else {
            throw FaultRuleError(
                field: "effect.quota.per",
                "required: the window in seconds, above 0 and at most \(Int(FaultRule.longestQuotaWindow))")
        }
        var scope = FaultQuota.Scope.token
        if let value = json["by"], value != .null {
            guard let name = value.stringValue, let named = FaultQuota.Scope(rawValue: name) else {
                throw FaultRuleError(field: "effect.quota.by", "must be one of \(scopes)")
            }
            guard named != .connection || door == .apns else {
                throw FaultRuleError(field: "effect.quota.by", "connection is the apns door's: token, topic or all here")
            }
            scope = named
        }
        return FaultQuota(requests: requests, per: per, by: scope)
    }

    private static func delay(_ json: JSONValue) throws(FaultRuleError) -> FaultDelay {
        func seconds(_ value: JSONValue?, _ field: String) throws(FaultRuleError) -> Double {
            guard let seconds = value?.doubleValue, seconds >= 0, seconds <= FaultDelay.longest else {
                throw FaultRuleError(
                    field: field, "must be a number of seconds from 0 to \(Int(FaultDelay.longest))")
            }
            return seconds
        }
        if case .object(let members) = json {
            for member in members where member.key != "min" && member.key != "max" {
                throw FaultRuleError(field: "effect.delay.\(member.key)", "unknown field; a delay range has min and max")
            }
            let least = try seconds(json["min"], "effect.delay.min")
            let most = try seconds(json["max"], "effect.delay.max")
            guard least <= most else { throw FaultRuleError(field: "effect.delay.max", "must not be below min") }
            return .between(min: least, max: most)
        }
        return .fixed(try seconds(json, "effect.delay"))
    }

    private static func answer(_ json: JSONValue, door: FaultDoor) throws(FaultRuleError) -> FaultAnswer {
        let reasonField = door.reasonField
        let wrongField = reasonField == "reason" ? "errorCode" : "reason"
        if json[wrongField] != nil {
            throw FaultRuleError(
                field: "effect.\(wrongField)", "the \(door.rawValue) door's answers name their \(reasonField), not \(wrongField)")
        }
        let table = door.reasons
        var status: Int?
        if let value = json["status"] {
            guard case .integer = value, let number = value.integerValue else {
                throw FaultRuleError(field: "effect.status", "must be a whole number")
            }
            guard table[number] != nil else {
                let statuses = table.keys.sorted().map(String.init).joined(separator: ", ")
                throw FaultRuleError(
                    field: "effect.status", "\(Self.service(door)) never answers \(number); it answers \(statuses)")
            }
            status = number
        }
        var answer: FaultAnswer
        if let value = json[reasonField] {
            guard let name = value.stringValue, let named = table.first(where: { $0.value.contains(name) }) else {
                throw FaultRuleError(field: "effect.\(reasonField)", "not a \(reasonField) \(Self.service(door)) documents")
            }
            if let status, named.key != status {
                let valid = table[status, default: []].joined(separator: ", ")
                throw FaultRuleError(
                    field: "effect.\(reasonField)",
                    "\(name) is \(Self.service(door))'s \(named.key), not \(status); \(status) has \(valid)")
            }
            answer = FaultAnswer(status: named.key, reason: name)
        } else if let status {
            guard let fallback = door.defaultReason(for: status) else {
                let valid = table[status, default: []].joined(separator: ", ")
                throw FaultRuleError(field: "effect.\(reasonField)", "required for \(status): one of \(valid)")
            }
            answer = FaultAnswer(status: status, reason: fallback)
        } else {
            throw FaultRuleError(field: "effect.status", "required (or \(reasonField), or delay)")
        }
        if let value = json["timestamp"], value != .null {
            guard door == .apns else {
                throw FaultRuleError(field: "effect.timestamp", "only APNs's 410 has a timestamp")
            }
            guard answer.status == 410 else {
                throw FaultRuleError(field: "effect.timestamp", "only a 410 answer has a timestamp")
            }
            guard case .integer(let milliseconds) = value, milliseconds >= 0 else {
                throw FaultRuleError(field: "effect.timestamp", "must be milliseconds since 1970, as APNs sends it")
            }
            answer.timestamp = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        if let retryAfter = try integer(json["retryAfter"], "effect.retryAfter", atLeast: 0) {
            answer.retryAfter = retryAfter
        }
        return answer
    }

    /// The door's service, as an error names it.
    private static func service(_ door: FaultDoor) -> String {
        switch door {
        case .apns: "APNs"
        case .fcm: "FCM"
        case .webpush: "a web push service"
        }
    }
}

extension FaultMatch {
    /// The match as the API shows it: the fields it names.
    var json: JSONValue {
        let named: [(String, String?)] = [
            ("token", token), ("topic", topic), ("pushType", pushType), ("bundle", bundle), ("path", path),
        ]
        return .object(named.compactMap { key, value in value.map { JSONValue.Member(key, .string($0)) } })
    }
}

extension FaultEffect {
    /// The effect as the API shows it, defaults filled in.
    ///
    /// - Parameter door: The rule's door, whose answers name their reason `reason` or `errorCode`.
    func json(door: FaultDoor) -> JSONValue {
        switch self {
        case .delay(.fixed(let seconds)):
            return .object([.init("delay", .number(seconds))])
        case .delay(.between(let least, let most)):
            return .object([.init("delay", .object([.init("min", .number(least)), .init("max", .number(most))]))])
        case .resetStream(let code): return .object([.init("rstStream", .string(code))])
        case .goAway(let reason): return .object([.init("goaway", .string(reason))])
        case .close: return .object([.init("close", .bool(true))])
        case .closeBeforeSettings: return .object([.init("closeBeforeSettings", .bool(true))])
        case .quota(let quota):
            let members: [JSONValue.Member] = [
                .init("requests", .integer(Int64(quota.requests))), .init("per", .number(quota.per)),
                .init("by", .string(quota.by.rawValue)),
            ]
            return .object([.init("quota", .object(members))])
        case .answer(let answer):
            var members: [JSONValue.Member] = [
                .init("status", .integer(Int64(answer.status))), .init(door.reasonField, .string(answer.reason)),
            ]
            if let timestamp = answer.timestamp {
                members.append(.init("timestamp", .integer(Int64((timestamp.timeIntervalSince1970 * 1000).rounded()))))
            }
            if let retryAfter = answer.retryAfter { members.append(.init("retryAfter", .integer(Int64(retryAfter)))) }
            return .object(members)
        }
    }
}
