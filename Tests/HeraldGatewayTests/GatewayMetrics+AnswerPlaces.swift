@testable import HeraldGateway

extension GatewayMetrics {
    /// How many provider requests were answered on an event loop and in a task (`herald_provider_answers_total`).
    var providerAnswerPlaces: (eventLoop: Int, task: Int) {
        let lines = prometheusText().split(separator: "\n")
        func count(_ place: String) -> Int {
            lines.first { $0.hasPrefix("herald_provider_answers_total{answered_in=\"\(place)\"}") }
                .flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
        }
        return (count("event_loop"), count("task"))
    }
}
