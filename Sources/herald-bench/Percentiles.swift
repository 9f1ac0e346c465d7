struct Percentiles {
    let count: Int
    let p50: Double
    let p99: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        func at(_ fraction: Double) -> Double {
            sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
        }
        p50 = at(0.5)
        p99 = at(0.99)
    }

    /// Percentiles measured elsewhere (another process).
    init(p50: Double, p99: Double, count: Int) {
        self.count = count
        self.p50 = p50
        self.p99 = p99
    }
}
