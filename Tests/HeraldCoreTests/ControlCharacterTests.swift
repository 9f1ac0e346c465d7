import HeraldCore
import Logging
import Synchronization
import Testing

/// Issue 71 (4): what reaches a terminal or a desktop is text — control characters escaped, tab and newline kept.
@Suite struct ControlCharacterTests {
    @Test(
        "C0 and C1 controls but tab and newline are escaped as \\xNN: the attacks' ESC ] 0 ; … BEL and CR ESC [ 2 K become visible text"
    )
    func escaping() {
        #expect("\u{1B}]0;owned-title\u{07}".escapingControlCharacters == #"\x1B]0;owned-title\x07"#)
        #expect("\r\u{1B}[2Kspoofed".escapingControlCharacters == #"\x0D\x1B[2Kspoofed"#)
        #expect("a\tb\nc".escapingControlCharacters == "a\tb\nc")
        #expect("\u{0}\u{7F}\u{85}\u{9B}31m".escapingControlCharacters == #"\x00\x7F\x85\x9B31m"#)
        #expect("这是一个标题 — Hello 🔔".escapingControlCharacters == "这是一个标题 — Hello 🔔")
        #expect(
            !"\u{1B}\u{07}\r\u{9B}".escapingControlCharacters.unicodeScalars.contains {
                $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
            })
    }

    @Test("EscapingLogHandler escapes the message and every metadata value, nested ones and the logger's own too")
    func logHandler() {
        let recorder = RecordingLogHandler()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(recorder) }
        logger[metadataKey: "device.id"] = "\u{1B}[31mred"
        logger.info(
            "title \u{1B}]0;x\u{07}",
            metadata: ["title": "\r\u{1B}[2K", "list": .array(["\u{07}"]), "map": .dictionary(["k": "\u{9B}"])])
        let line = recorder.recorded.lines.withLock { $0 }
        #expect(line == [#"title \x1B]0;x\x07 | device.id=\x1B[31mred list=["\\x07"] map=["k": "\\x9B"] title=\x0D\x1B[2K"#])
    }
}

/// The lines a ``RecordingLogHandler`` and its copies recorded.
private final class RecordedLines: Sendable {
    let lines = Mutex<[String]>([])
}

/// Records each line as `message | key=value …`, keys sorted, with the handler's metadata.
private struct RecordingLogHandler: LogHandler {
    let recorded = RecordedLines()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let text = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        recorded.lines.withLock { $0.append("\(event.message) | \(text)") }
    }
}
