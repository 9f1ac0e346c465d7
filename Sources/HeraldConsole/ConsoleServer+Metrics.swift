import Foundation
import HeraldCore
import HeraldGatewayStore
import Hummingbird

extension ConsoleServer {
    /// A span of time the metrics page shows, in buckets.
    enum MetricsRange: String, CaseIterable {
        case hour, day, week

        /// How long it is.
        var span: TimeInterval {
            switch self {
            case .hour: 3_600
            case .day: 86_400
            case .week: 7 * 86_400
            }
        }

        /// How long one bar is.
        var bucket: TimeInterval {
            switch self {
            case .hour: 60
            case .day: 1_800
            case .week: 10_800
            }
        }
    }

    /// `GET /metrics?range=hour|day|week`: the delivery log's events per Apple category (the Push Notifications
    /// Console's: received, delivered, delivered from storage, stored, each discard), one bar chart each, drawn here
    /// as SVG.
    func metricsRoutes(_ router: RouterGroup<ConsoleRequestContext>) {
        router.get("/metrics") { [self] request, context in
            guard let session = await signedIn(context) else { return Response.redirect(to: "/login", type: .normal) }
            let range = request.uri.queryParameters.get("range").flatMap(MetricsRange.init(rawValue:)) ?? .hour
            return try await metricsPage(session: session, range: range)
        }
    }

    private func metricsPage(session: ConsoleSession, range: MetricsRange) async throws -> Response {
        let now = clock.now
        // Whole buckets, the last one the current.
        let end = (now.timeIntervalSince1970 / range.bucket).rounded(.down) * range.bucket + range.bucket
        let start = end - range.span
        let counts = try await gateway.eventCounts(since: Date(timeIntervalSince1970: start), bucket: range.bucket)
        let buckets = Int(range.span / range.bucket)
        var series: [String: [Int]] = [:]
        for count in counts {
            let index = Int(((count.bucket.timeIntervalSince1970 - start) / range.bucket).rounded(.down))
            guard (0..<buckets).contains(index) else { continue }
            let name = DeliveryEvent(uniqueID: "", at: count.bucket, kind: count.kind, detail: count.detail).stateName
            series[name, default: Array(repeating: 0, count: buckets)][index] += count.count
        }
        let order = [
            "Received by APNs", "Delivered to Device", "Delivered to Device (From Storage)", "Stored - Device Offline",
            "Stored - Power Considerations",
        ]
        let names = order.filter { series[$0] != nil } + series.keys.filter { !order.contains($0) }.sorted()
        let values: [String: Any] = [
            "title": "Metrics", "csrf": session.csrf, "signedIn": true, "range": range.rawValue,
            "ranges": MetricsRange.allCases.map { ["name": $0.rawValue, "current": $0 == range] as [String: Any] },
            "hasSeries": !names.isEmpty,
            "charts": names.map { name -> [String: Any] in
                let values = series[name] ?? []
                return [
                    "name": name, "total": values.reduce(0, +),
                    "svg": MetricsChart(
                        title: name, values: values, start: Date(timeIntervalSince1970: start), bucket: range.bucket
                    ).svg,
                ]
            },
        ]
        return Self.page("metrics", values)
    }
}
