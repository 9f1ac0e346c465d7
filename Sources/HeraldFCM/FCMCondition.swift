/// An FCM topic condition — `'TopicA' in topics && ('TopicB' in topics || !('TopicC' in topics))` — parsed once and
/// evaluated against the topics a registration is subscribed to.
///
/// The grammar is Google's: a topic test is a quoted topic name followed by `in topics`; tests combine with `&&`,
/// `||`, `!` and parentheses; at most five topics. Where Google's text is the only rule ("FCM first evaluates any
/// conditions in parentheses, and then evaluates the expression from left to right"), Herald follows it literally:
/// `&&` and `||` have the same precedence and group from the left, so `'a' in topics || 'b' in topics && 'c' in topics`
/// is `('a' || 'b') && 'c'`. Names may be quoted with `'` or `"`.
public struct FCMCondition: Sendable, Hashable, CustomStringConvertible {
    /// The parsed expression.
    public indirect enum Expression: Sendable, Hashable {
        case topic(String)
        case not(Expression)
        case and(Expression, Expression)
        case or(Expression, Expression)
    }

    /// The most topics one condition may name.
    public static let maximumTopics = 5

    /// The expression.
    public let expression: Expression
    /// The topics it names, in order of first mention.
    public let topics: [String]
    /// The condition as it was written.
    public let description: String

    /// Parses `text`.
    ///
    /// - Parameter text: The message's `condition`.
    /// - Throws: ``FCMError`` `INVALID_ARGUMENT` naming what is wrong (syntax, a bad topic name, more than five topics).
    public init(_ text: String) throws(FCMError) {
        var parser = Parser(Array(text.unicodeScalars))
        let expression = try parser.parseExpression()
        parser.skipSpaces()
        guard parser.isAtEnd else { throw Self.invalid("Invalid condition expression provided.") }
        guard parser.topics.count <= Self.maximumTopics else {
            throw Self.invalid(
                "Invalid condition expression provided. A condition can name at most \(Self.maximumTopics) topics.")
        }
        self.expression = expression
        self.topics = parser.topics
        self.description = text
    }

    /// Whether a registration subscribed to `subscribed` is a target.
    ///
    /// - Parameter subscribed: The registration's topics.
    public func matches(_ subscribed: Set<String>) -> Bool {
        Self.evaluate(expression, subscribed)
    }

    private static func evaluate(_ expression: Expression, _ subscribed: Set<String>) -> Bool {
        switch expression {
        case .topic(let name): subscribed.contains(name)
        case .not(let inner): !evaluate(inner, subscribed)
        case .and(let left, let right): evaluate(left, subscribed) && evaluate(right, subscribed)
        case .or(let left, let right): evaluate(left, subscribed) || evaluate(right, subscribed)
        }
    }

    static func invalid(_ message: String) -> FCMError {
        FCMError(.invalidArgument, message)
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0
        var topics: [String] = []
        var depth = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var isAtEnd: Bool { index == scalars.count }

        mutating func skipSpaces() {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        }

        mutating func take(_ text: String) -> Bool {
            skipSpaces()
            let wanted = Array(text.unicodeScalars)
            guard index + wanted.count <= scalars.count, Array(scalars[index..<index + wanted.count]) == wanted else {
                return false
            }
            index += wanted.count
            return true
        }

        /// expression := unary (('&&' | '||') unary)*, grouped from the left.
        mutating func parseExpression() throws(FCMError) -> Expression {
            var result = try parseUnary()
            while true {
                if take("&&") {
                    result = .and(result, try parseUnary())
                } else if take("||") {
                    result = .or(result, try parseUnary())
                } else {
                    return result
                }
            }
        }

        /// unary := '!' unary | '(' expression ')' | topic-test
        mutating func parseUnary() throws(FCMError) -> Expression {
            if take("!") { return .not(try parseUnary()) }
            if take("(") {
                depth += 1
                guard depth <= 32 else { throw FCMCondition.invalid("Invalid condition expression provided.") }
                let inner = try parseExpression()
                guard take(")") else { throw FCMCondition.invalid("Invalid condition expression provided.") }
                depth -= 1
                return inner
            }
            return try parseTopicTest()
        }

        /// topic-test := quote name quote 'in' 'topics'
        mutating func parseTopicTest() throws(FCMError) -> Expression {
            skipSpaces()
            guard index < scalars.count, scalars[index] == "'" || scalars[index] == "\"" else {
                throw FCMCondition.invalid("Invalid condition expression provided.")
            }
            let quote = scalars[index]
            index += 1
            let start = index
            while index < scalars.count, scalars[index] != quote { index += 1 }
            guard index < scalars.count else { throw FCMCondition.invalid("Invalid condition expression provided.") }
            let name = String(String.UnicodeScalarView(scalars[start..<index]))
            index += 1
            guard FCMTopic.isValidName(name) else {
                throw FCMCondition.invalid("Invalid condition expression provided. Invalid topic name: \(name)")
            }
            // `in` and `topics` are words: `'a' intopics` is not a test.
            guard take("in"), index < scalars.count, scalars[index] == " ", take("topics") else {
                throw FCMCondition.invalid("Invalid condition expression provided.")
            }
            if index < scalars.count, Self.isNameCharacter(scalars[index]) {
                throw FCMCondition.invalid("Invalid condition expression provided.")
            }
            if !topics.contains(name) { topics.append(name) }
            return .topic(name)
        }

        static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
        }
    }
}
