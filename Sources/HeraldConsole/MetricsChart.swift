import Foundation

/// A bar chart of counts over time as SVG, drawn by the console itself (no script, no inline style: the stylesheet
/// colours it). Every text in it is escaped.
struct MetricsChart {
    /// What it counts (the chart's accessible name).
    var title: String
    /// One count per bucket, oldest first.
    var values: [Int]
    /// The first bucket's start.
    var start: Date
    /// How long a bucket is, in seconds.
    var bucket: TimeInterval

    static let width = 720.0
    static let height = 120.0
    /// Room for the axis labels at the left and bottom.
    static let left = 44.0
    static let bottom = 18.0

    /// The chart.
    var svg: String {
        let top = max(values.max() ?? 0, 1)
        let plotWidth = Self.width - Self.left
        let plotHeight = Self.height - Self.bottom - 4
        let barWidth = plotWidth / Double(max(values.count, 1))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = bucket * Double(values.count) > 86_400 ? "MMM d HH:mm" : "HH:mm"
        var parts = [
            #"<svg class="chart" xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 \#(Self.width) \#(Self.height)" width="\#(Self.width)" height="\#(Self.height)">"#,
            "<title>\(Self.escaped(title))</title>",
            #"<line class="axis" x1="\#(Self.left)" y1="\#(4 + plotHeight)" x2="\#(Self.width)" y2="\#(4 + plotHeight)"/>"#,
            #"<text class="label" x="\#(Self.left - 6)" y="12" text-anchor="end">\#(top)</text>"#,
            #"<text class="label" x="\#(Self.left - 6)" y="\#(4 + plotHeight)" text-anchor="end">0</text>"#,
        ]
        for (index, value) in values.enumerated() where value > 0 {
            let barHeight = plotHeight * Double(value) / Double(top)
            let x = Self.left + Double(index) * barWidth
            let time = formatter.string(from: start.addingTimeInterval(Double(index) * bucket))
            parts.append(
                #"<rect x="\#(Self.rounded(x + 0.5))" y="\#(Self.rounded(4 + plotHeight - barHeight))" width="\#(Self.rounded(max(barWidth - 1, 1)))" height="\#(Self.rounded(barHeight))"><title>\#(Self.escaped(time)) UTC: \#(value)</title></rect>"#
            )
        }
        for index in stride(from: 0, to: values.count, by: max(values.count / 6, 1)) {
            let x = Self.left + Double(index) * barWidth
            let time = formatter.string(from: start.addingTimeInterval(Double(index) * bucket))
            parts.append(#"<text class="label" x="\#(Self.rounded(x))" y="\#(Self.height - 4)">\#(Self.escaped(time))</text>"#)
        }
        parts.append("</svg>")
        return parts.joined()
    }

    private static func rounded(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    /// Text for an SVG (XML) text node or attribute.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
