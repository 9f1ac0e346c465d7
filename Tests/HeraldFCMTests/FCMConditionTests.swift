import HeraldFCM
import Testing

@Suite struct FCMConditionTests {
    @Test("Google's example: 'TopicA' in topics && ('TopicB' in topics || 'TopicC' in topics)")
    func googlesExample() throws {
        let condition = try FCMCondition("'TopicA' in topics && ('TopicB' in topics || 'TopicC' in topics)")
        #expect(condition.topics == ["TopicA", "TopicB", "TopicC"])
        #expect(condition.matches(["TopicA", "TopicB"]))
        #expect(condition.matches(["TopicA", "TopicC"]))
        // "a user subscribed to any single topic does not receive the message"
        for single in ["TopicA", "TopicB", "TopicC"] { #expect(!condition.matches([single])) }
    }

    @Test("Negation, double quotes, no spaces around operators, parentheses nested")
    func forms() throws {
        let negated = try FCMCondition("!('news' in topics) && \"sport\" in topics")
        #expect(negated.matches(["sport"]))
        #expect(!negated.matches(["sport", "news"]))
        let tight = try FCMCondition("'a' in topics&&('b' in topics||'c' in topics)")
        #expect(tight.matches(["a", "c"]))
        let nested = try FCMCondition("((('a' in topics)))")
        #expect(nested.matches(["a"]) && !nested.matches(["b"]))
    }

    @Test("&& and || group from the left, as Google's text says (\"from left to right\")")
    func leftToRight() throws {
        let condition = try FCMCondition("'a' in topics || 'b' in topics && 'c' in topics")
        #expect(condition.expression == .and(.or(.topic("a"), .topic("b")), .topic("c")))
        #expect(!condition.matches(["a"]), "('a' || 'b') && 'c', not 'a' || ('b' && 'c')")
        #expect(condition.matches(["a", "c"]))
    }

    @Test(
        "Five topics at most; a sixth, bad syntax and bad topic names are INVALID_ARGUMENT",
        arguments: [
            "'a' in topics || 'b' in topics || 'c' in topics || 'd' in topics || 'e' in topics || 'f' in topics",
            "'a' in topics &&", "'a' in topics && ('b' in topics", "'a' in topics)", "a in topics", "'a' in topic",
            "'a' intopics", "'a' in topicsX", "'a b' in topics", "'' in topics", "", "   ", "'a' in topics 'b' in topics",
            "'a' in topics & 'b' in topics", "'unterminated in topics",
        ])
    func invalid(_ text: String) {
        #expect(throws: FCMError.self) { try FCMCondition(text) }
        do {
            _ = try FCMCondition(text)
        } catch {
            #expect(error.code == .invalidArgument && error.code.httpStatus == 400)
        }
    }

    @Test("The same topic named twice counts once towards five")
    func repeatedTopic() throws {
        let condition = try FCMCondition(
            "'a' in topics && ('a' in topics || 'b' in topics || 'c' in topics || 'd' in topics || 'e' in topics)")
        #expect(condition.topics.count == 5)
    }

    @Test("Topic names: FCM's characters, with or without /topics/")
    func topicNames() {
        #expect(FCMTopic.name(fromField: "/topics/weather") == "weather")
        #expect(FCMTopic.name(fromField: "a-b_c.d~e%20") == "a-b_c.d~e%20")
        #expect(FCMTopic.name(fromField: "bad topic") == nil)
        #expect(FCMTopic.name(fromField: "/topics/") == nil)
        #expect(FCMTopic.name(fromField: "caf\u{E9}") == nil)
    }
}
