import Foundation

/// The gateway's `herald_event_loop_lag_seconds` histogram, all loops together, read from its Prometheus text.
struct EventLoopLag {
    /// Cumulative count per bucket bound (seconds; `.infinity` for `+Inf`).
    var buckets: [Double: Double] = [:]

    init(prometheusText text: String) {
        for line in text.split(separator: "\n") where line.hasPrefix("herald_event_loop_lag_seconds_bucket{") {
            guard let le = line.range(of: #"le="([^"]+)""#, options: .regularExpression),
                let count = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            let bound = line[le].dropFirst(4).dropLast()
            buckets[bound == "+Inf" ? .infinity : Double(bound) ?? .infinity, default: 0] += count
        }
    }

    private init(buckets: [Double: Double]) { self.buckets = buckets }

    /// The measurements taken after `earlier`.
    func since(_ earlier: EventLoopLag) -> EventLoopLag {
        EventLoopLag(buckets: buckets.merging(earlier.buckets.mapValues { -$0 }) { $0 + $1 })
    }

    /// How many measurements there are.
    var count: Int { Int(buckets[.infinity] ?? 0) }

    /// The bucket bound that `quantile` of the measurements are at or under.
    func bound(_ quantile: Double) -> Double {
        let total = buckets[.infinity] ?? 0
        return buckets.keys.sorted().first { (buckets[$0] ?? 0) >= quantile * total } ?? .infinity
    }

    var summary: String {
        func ms(_ seconds: Double) -> String { seconds.isInfinite ? "> 5 s" : "≤ \(Int((seconds * 1_000).rounded())) ms" }
        return "p50 \(ms(bound(0.5))), p99 \(ms(bound(0.99))), max \(ms(bound(1)))"
    }
}
