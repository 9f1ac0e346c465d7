import Foundation

extension Date {
    /// Reads an RFC 3339 time, with or without fractional seconds (`2026-12-06T09:00:00Z`, `…09:00:00.250Z`): what the
    /// test-bed API and the CLI take for a time.
    ///
    /// - Parameter text: The time.
    public init?(rfc3339 text: String) {
        guard
            let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text))
        else { return nil }
        self = date
    }
}
