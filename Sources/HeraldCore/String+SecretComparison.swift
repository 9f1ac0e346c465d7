extension String {
    /// Whether this string, as given by a client, is the secret `expected`: compared byte by byte in time that does not
    /// depend on where they differ (only on their lengths).
    ///
    /// - Parameter expected: The secret the server keeps.
    public func isSameSecret(as expected: String) -> Bool {
        let given = Array(utf8), kept = Array(expected.utf8)
        guard given.count == kept.count else { return false }
        return zip(given, kept).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
