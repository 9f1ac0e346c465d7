import Foundation
import HeraldCore
import Testing

@testable import HeraldFaults

/// The fault rules' book on an injected time: matching, order, `after`, `times`, seeded probability, `ttl`.
@Suite struct FaultBookTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func draft(_ json: String) throws -> FaultRule.Draft {
        try FaultRule.Draft(json: try JSONValue(parsing: Data(json.utf8)))
    }

    private func request(token: String = "aa", topic: String = "com.example.app") -> FaultRequest {
        FaultRequest(token: token, topic: topic, pushType: "alert", bundle: topic, path: "/3/device/\(token)")
    }

    /// Which of `count` requests the book hits (1-based).
    private func hits(_ book: FaultBook, count: Int, request: FaultRequest? = nil) -> [Int] {
        (1...count).filter { _ in book.hit(.apns, request ?? self.request(), now: start) != nil }
    }

    @Test(
        "after + times hit exactly the requests they name: the first `after` pass, the next `times` are hit, then the rule is spent"
    )
    func afterAndTimes() throws {
        let book = FaultBook()
        book.add(try draft(#"{"door":"apns","effect":{"status":429},"after":2,"times":3}"#), now: start)
        #expect(hits(book, count: 10) == [3, 4, 5])
        let rule = try #require(book.rules(now: start).first)
        #expect(rule.hits == 3 && rule.isSpent)
    }

    @Test("A seeded rule gives the same sequence of hits run after run; another seed another sequence")
    func seededProbability() throws {
        func sequence(seed: Int) throws -> [Int] {
            let book = FaultBook()
            book.add(try draft(#"{"door":"apns","effect":{"status":503},"probability":0.3,"seed":\#(seed)}"#), now: start)
            return hits(book, count: 200)
        }
        let first = try sequence(seed: 42)
        #expect(try sequence(seed: 42) == first)
        #expect(try sequence(seed: 43) != first)
        // About 30 %: a rule's draws are not all hits nor all passes.
        #expect((30...90).contains(first.count))
    }

    @Test("A rule with a ttl is gone at its time, on the gateway's clock")
    func ttlRemovesTheRule() throws {
        let book = FaultBook()
        let rule = book.add(try draft(#"{"door":"apns","effect":{"status":500},"ttl":10}"#), now: start)
        #expect(rule.expiresAt == start.addingTimeInterval(10))
        #expect(book.hit(.apns, request(), now: start.addingTimeInterval(9.9)) != nil)
        #expect(book.hit(.apns, request(), now: start.addingTimeInterval(10)) == nil)
        #expect(book.rules(now: start.addingTimeInterval(10)).isEmpty)
        #expect(book.isEmpty)
    }

    @Test("Rules apply in the order added: the first that matches decides, even when it lets the request pass")
    func firstMatchWins() throws {
        let book = FaultBook()
        book.add(try draft(#"{"door":"apns","match":{"token":"AA"},"effect":{"status":410},"probability":0}"#), now: start)
        let catchAll = book.add(try draft(#"{"door":"apns","effect":{"delay":1.5}}"#), now: start)
        #expect(book.hit(.apns, request(token: "aa"), now: start) == nil)
        #expect(book.hit(.apns, request(token: "bb"), now: start) == FaultHit(ruleID: catchAll.id, action: .delay(seconds: 1.5)))
        // Another door's requests are not this door's rules'.
        #expect(book.hit(.fcm, request(token: "bb"), now: start) == nil)
        #expect(book.remove(id: catchAll.id))
        #expect(!book.remove(id: catchAll.id))
        #expect(book.hit(.apns, request(token: "bb"), now: start) == nil)
    }

    @Test(
        "Rules indexed by token keep the order they were added in: a token's rule and a rule for every token, whichever came first; a thousand other tokens' rules change nothing"
    )
    func indexKeepsOrder() throws {
        let book = FaultBook()
        for n in 0..<1000 {
            book.add(try draft(#"{"door":"apns","match":{"token":"t\#(n)"},"effect":{"status":500}}"#), now: start)
        }
        let first = book.add(try draft(#"{"door":"apns","match":{"token":"aa"},"effect":{"status":500},"times":1}"#), now: start)
        let everyToken = book.add(try draft(#"{"door":"apns","effect":{"status":503}}"#), now: start)
        book.add(try draft(#"{"door":"apns","match":{"token":"aa"},"effect":{"status":429}}"#), now: start)
        #expect(book.hit(.apns, request(token: "aa"), now: start)?.ruleID == first.id)
        // Spent: the next in order is the rule for every token, not the later one for this token.
        #expect(book.hit(.apns, request(token: "aa"), now: start)?.ruleID == everyToken.id)
        #expect(book.hit(.apns, request(token: "bb"), now: start)?.ruleID == everyToken.id)
        #expect(book.hit(.apns, request(token: "t7"), now: start)?.ruleID == "fault-8")
        #expect(book.remove(id: everyToken.id))
        #expect(
            book.hit(.apns, request(token: "aa"), now: start)?.action
                == .answer(FaultAnswer(status: 429, reason: "TooManyRequests")))
        #expect(book.hit(.apns, request(token: "bb"), now: start) == nil)
    }

    @Test("R-04: a 410 hit carries the rule's timestamp, or the time of the hit; a delay range is drawn within its bounds")
    func drawnValues() throws {
        let book = FaultBook()
        let dated = book.add(
            try draft(#"{"door":"apns","match":{"topic":"a"},"effect":{"status":410,"timestamp":1700000000123}}"#), now: start)
        let undated = book.add(
            try draft(#"{"door":"apns","match":{"topic":"b"},"effect":{"reason":"Unregistered","retryAfter":7}}"#),
            now: start)
        book.add(try draft(#"{"door":"apns","effect":{"delay":{"min":0.5,"max":2}},"seed":7}"#), now: start)
        #expect(
            book.hit(.apns, request(topic: "a"), now: start)
                == FaultHit(
                    ruleID: dated.id,
                    action: .answer(
                        FaultAnswer(
                            status: 410, reason: "Unregistered", timestamp: Date(timeIntervalSince1970: 1_700_000_000.123))))
        )
        #expect(
            book.hit(.apns, request(topic: "b"), now: start)
                == FaultHit(
                    ruleID: undated.id,
                    action: .answer(FaultAnswer(status: 410, reason: "Unregistered", timestamp: start, retryAfter: 7))))
        var delays: [Double] = []
        for _ in 0..<50 {
            guard case .delay(let seconds)? = book.hit(.apns, request(topic: "c"), now: start)?.action else {
                Issue.record("not a delay")
                return
            }
            delays.append(seconds)
        }
        #expect(delays.allSatisfy { (0.5...2).contains($0) })
        #expect(Set(delays).count > 1)
    }

    @Test(
        "Frame-level effects: a reset, a GOAWAY and a close are asked for by requests; closeBeforeSettings only by connections that open; a refusal is a reset with REFUSED_STREAM or a GOAWAY"
    )
    func frameLevelEffects() throws {
        let book = FaultBook()
        let atConnection = book.add(try draft(#"{"door":"apns","effect":{"closeBeforeSettings":true},"times":1}"#), now: start)
        let reset = book.add(try draft(#"{"door":"apns","effect":{"rstStream":"INTERNAL_ERROR"}}"#), now: start)
        #expect(
            book.hit(.apns, request(), now: start) == FaultHit(ruleID: reset.id, action: .resetStream(code: "INTERNAL_ERROR")))
        #expect(
            book.hit(.apns, FaultRequest(), now: start, connection: true)
                == FaultHit(ruleID: atConnection.id, action: .closeBeforeSettings))
        #expect(book.hit(.apns, FaultRequest(), now: start, connection: true) == nil, "spent")
        #expect(reset.json["effect"] == .object([.init("rstStream", .string("INTERNAL_ERROR"))]))
        #expect(FaultHit.Action.goAway(reason: "Shutdown").refuses && FaultHit.Action.resetStream(code: "REFUSED_STREAM").refuses)
        #expect(!FaultHit.Action.resetStream(code: "CANCEL").refuses && !FaultHit.Action.close.refuses)
        #expect(try draft(#"{"door":"apns","effect":{"goaway":"Shutdown"}}"#).effect == .goAway(reason: "Shutdown"))
        #expect(try draft(#"{"door":"apns","effect":{"close":true}}"#).effect == .close)
    }

    @Test("A rule is shown with every default written out — never a silent zero — and a seed chosen for it when it gave none")
    func defaultsAreShown() throws {
        let book = FaultBook()
        let rule = book.add(try draft(#"{"door":"apns","effect":{"status":429}}"#), now: start)
        let json = rule.json
        #expect(json["id"] == .string("fault-1"))
        #expect(json["effect"] == .object([.init("status", .integer(429)), .init("reason", .string("TooManyRequests"))]))
        #expect(json["times"] == .null)
        #expect(json["after"] == .integer(0))
        #expect(json["probability"] == .number(1))
        #expect(json["ttl"] == .null)
        #expect(json["hits"] == .integer(0))
        #expect(json["spent"] == .bool(false))
        #expect(rule.seed < 1 << 53)
        // The rule as shown, added again, is the same rule (with its seed: the same hits).
        let again = try FaultRule.Draft(json: .object(json.objectMembers.filter { FaultRule.fields.contains($0.key) }))
        #expect(again.seed == rule.seed && again.effect == rule.effect && again.times == nil && again.probability == 1)
    }

    @Test(
        "A quota admits its requests in each window, counted per token, and answers the door's 429 with the seconds left as Retry-After"
    )
    func quota() throws {
        let book = FaultBook()
        book.add(try draft(#"{"door":"apns","effect":{"quota":{"requests":2,"per":10}}}"#), now: start)
        func answer(_ token: String, at seconds: Double) -> FaultAnswer? {
            guard let hit = book.hit(.apns, request(token: token), now: start.addingTimeInterval(seconds)) else { return nil }
            guard case .answer(let answer) = hit.action else { return nil }
            return answer
        }
        #expect(answer("aa", at: 0) == nil)
        #expect(answer("aa", at: 1) == nil)
        #expect(answer("aa", at: 2.5) == FaultAnswer(status: 429, reason: "TooManyRequests", retryAfter: 8))
        #expect(answer("bb", at: 3) == nil, "another token has a count of its own")
        #expect(answer("aa", at: 9.9) == FaultAnswer(status: 429, reason: "TooManyRequests", retryAfter: 1))
        #expect(answer("aa", at: 10) == nil, "a new window opens when the last ended")
        #expect(book.rules(now: start).first?.hits == 2, "refused requests are the rule's hits; admitted ones are not")

        let fcm = FaultBook()
        fcm.add(try draft(#"{"door":"fcm","effect":{"quota":{"requests":1,"per":60,"by":"all"}}}"#), now: start)
        #expect(fcm.hit(.fcm, FaultRequest(token: "a"), now: start) == nil)
        let hit = fcm.hit(.fcm, FaultRequest(token: "b"), now: start.addingTimeInterval(30))
        #expect(hit?.action == .answer(FaultAnswer(status: 429, reason: "QUOTA_EXCEEDED", retryAfter: 30)))

        let connections = FaultBook()
        connections.add(
            try draft(#"{"door":"apns","effect":{"quota":{"requests":1,"per":60,"by":"connection"}}}"#), now: start)
        #expect(connections.hit(.apns, FaultRequest(token: "a", connection: 1), now: start) == nil)
        #expect(connections.hit(.apns, FaultRequest(token: "b", connection: 2), now: start) == nil)
        #expect(connections.hit(.apns, FaultRequest(token: "c", connection: 1), now: start) != nil)
    }

    @Test("Each door's answers in its service's words: FCM's errorCode and web push's reasons, with their defaults")
    func doorAnswers() throws {
        #expect(
            try draft(#"{"door":"fcm","effect":{"status":503}}"#).effect
                == .answer(FaultAnswer(status: 503, reason: "UNAVAILABLE")))
        #expect(
            try draft(#"{"door":"fcm","effect":{"errorCode":"UNREGISTERED"}}"#).effect
                == .answer(FaultAnswer(status: 404, reason: "UNREGISTERED")))
        #expect(
            try draft(#"{"door":"webpush","effect":{"status":410}}"#).effect
                == .answer(FaultAnswer(status: 410, reason: "Gone")))
        #expect(
            try draft(#"{"door":"webpush","effect":{"status":429,"retryAfter":5}}"#).effect
                == .answer(FaultAnswer(status: 429, reason: "TooManyRequests", retryAfter: 5)))
        let rule = FaultBook().add(try draft(#"{"door":"fcm","effect":{"status":429}}"#), now: start)
        #expect(
            rule.json["effect"]
                == .object([.init("status", .integer(429)), .init("errorCode", .string("QUOTA_EXCEEDED"))]))
        let quota = FaultBook().add(try draft(#"{"door":"webpush","effect":{"quota":{"requests":3,"per":1.5}}}"#), now: start)
        let shown = try FaultRule.Draft(json: .object(quota.json.objectMembers.filter { FaultRule.fields.contains($0.key) }))
        #expect(shown.effect == .quota(FaultQuota(requests: 3, per: 1.5, by: .token)))
    }

    @Test(
        "Bad input: every field at fault is named, with what to do",
        arguments: [
            (#"[1]"#, ""),
            (#"{"effect":{"status":429}}"#, "door"),
            (#"{"door":"mqtt","effect":{"status":429}}"#, "door"),
            (#"{"door":"fcm","effect":{"status":410}}"#, "effect.status"),
            (#"{"door":"fcm","effect":{"status":429,"reason":"TooManyRequests"}}"#, "effect.reason"),
            (#"{"door":"fcm","effect":{"errorCode":"TEAPOT"}}"#, "effect.errorCode"),
            (#"{"door":"fcm","effect":{"status":503,"errorCode":"QUOTA_EXCEEDED"}}"#, "effect.errorCode"),
            (#"{"door":"fcm","effect":{"goaway":"Shutdown"}}"#, "effect.goaway"),
            (#"{"door":"fcm","effect":{"closeBeforeSettings":true}}"#, "effect.closeBeforeSettings"),
            (#"{"door":"fcm","effect":{"quota":{"requests":1,"per":1,"by":"connection"}}}"#, "effect.quota.by"),
            (#"{"door":"fcm","effect":{"status":404,"timestamp":1}}"#, "effect.timestamp"),
            (#"{"door":"webpush","effect":{"status":410,"timestamp":1}}"#, "effect.timestamp"),
            (#"{"door":"webpush","effect":{"goaway":"Shutdown"}}"#, "effect.goaway"),
            (#"{"door":"webpush","effect":{"rstStream":"CANCEL"}}"#, "effect.rstStream"),
            (#"{"door":"webpush","effect":{"closeBeforeSettings":true}}"#, "effect.closeBeforeSettings"),
            (#"{"door":"webpush","effect":{"status":400}}"#, "effect.reason"),
            (#"{"door":"webpush","effect":{"status":418}}"#, "effect.status"),
            (#"{"door":"webpush","effect":{"errorCode":"UNAVAILABLE"}}"#, "effect.errorCode"),
            (#"{"door":"apns"}"#, "effect"),
            (#"{"door":"apns","effect":{"status":429},"color":"red"}"#, "color"),
            (#"{"door":"apns","effect":{}}"#, "effect"),
            (#"{"door":"apns","effect":{"teapot":true}}"#, "effect.teapot"),
            (#"{"door":"apns","effect":{"goaway":"Teapot"}}"#, "effect.goaway"),
            (#"{"door":"apns","effect":{"goaway":"Shutdown","status":503}}"#, "effect.status"),
            (#"{"door":"apns","effect":{"rstStream":"OOPS"}}"#, "effect.rstStream"),
            (#"{"door":"apns","effect":{"close":false}}"#, "effect.close"),
            (#"{"door":"apns","effect":{"closeBeforeSettings":true},"match":{"topic":"a"}}"#, "match"),
            (#"{"door":"apns","effect":{"quota":{"per":1}}}"#, "effect.quota.requests"),
            (#"{"door":"apns","effect":{"quota":{"requests":0,"per":1}}}"#, "effect.quota.requests"),
            (#"{"door":"apns","effect":{"quota":{"requests":1,"per":0}}}"#, "effect.quota.per"),
            (#"{"door":"apns","effect":{"quota":{"requests":1,"per":1,"by":"moon"}}}"#, "effect.quota.by"),
            (#"{"door":"apns","effect":{"quota":{"requests":1,"per":1,"burst":2}}}"#, "effect.quota.burst"),
            (#"{"door":"apns","effect":{"quota":{"requests":1,"per":1},"status":429}}"#, "effect.status"),
            (#"{"door":"apns","effect":{"quota":{"requests":1,"per":1}},"probability":0.5}"#, "probability"),
            (#"{"door":"apns","effect":{"status":418}}"#, "effect.status"),
            (#"{"door":"apns","effect":{"status":"429"}}"#, "effect.status"),
            (#"{"door":"apns","effect":{"status":429,"reason":"Unregistered"}}"#, "effect.reason"),
            (#"{"door":"apns","effect":{"status":400}}"#, "effect.reason"),
            (#"{"door":"apns","effect":{"reason":"NoSuchReason"}}"#, "effect.reason"),
            (#"{"door":"apns","effect":{"status":429,"timestamp":1}}"#, "effect.timestamp"),
            (#"{"door":"apns","effect":{"status":429,"retryAfter":-1}}"#, "effect.retryAfter"),
            (#"{"door":"apns","effect":{"delay":-1}}"#, "effect.delay"),
            (#"{"door":"apns","effect":{"delay":{"min":3,"max":2}}}"#, "effect.delay.max"),
            (#"{"door":"apns","effect":{"delay":1,"status":429}}"#, "effect.status"),
            (#"{"door":"apns","effect":{"status":429},"probability":1.5}"#, "probability"),
            (#"{"door":"apns","effect":{"status":429},"times":0}"#, "times"),
            (#"{"door":"apns","effect":{"status":429},"times":-1}"#, "times"),
            (#"{"door":"apns","effect":{"status":429},"after":-1}"#, "after"),
            (#"{"door":"apns","effect":{"status":429},"after":1.5}"#, "after"),
            (#"{"door":"apns","effect":{"status":429},"seed":-1}"#, "seed"),
            (#"{"door":"apns","effect":{"status":429},"ttl":0}"#, "ttl"),
            (#"{"door":"apns","effect":{"status":429},"match":{"device":"x"}}"#, "match.device"),
            (#"{"door":"apns","effect":{"status":429},"match":{"pushType":"fax"}}"#, "match.pushType"),
        ])
    func badInput(json: String, field: String) throws {
        #expect(throws: FaultRuleError.self) { try draft(json) }
        do {
            _ = try draft(json)
        } catch let error as FaultRuleError {
            #expect(error.field == field, "\(json): \(error)")
            #expect(!error.message.isEmpty)
        }
    }
}

extension JSONValue {
    fileprivate var objectMembers: [Member] {
        if case .object(let members) = self { return members }
        return []
    }
}
