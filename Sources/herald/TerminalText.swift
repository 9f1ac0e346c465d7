import HeraldCore

/// `print` for the herald command, in place of the standard library's: what it writes is text — every control
/// character but tab and newline escaped (``Swift/String/escapingControlCharacters``) — so a push's title, a device's
/// report or a log's detail that a sender chose can neither retitle the terminal nor erase and rewrite a line
/// (docs/security.md). JSON output has no raw control characters to escape and is unchanged.
///
/// - Parameters:
///   - items: What to write, as the standard library's `print` writes them.
///   - separator: Between the items.
///   - terminator: After them.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Swift.print(items.map { "\($0)" }.joined(separator: separator).escapingControlCharacters, terminator: terminator)
}
