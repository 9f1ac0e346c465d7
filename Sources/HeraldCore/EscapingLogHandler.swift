import Logging

/// A log handler that hands each line to another with the control characters of its message and metadata escaped
/// (``Swift/String/escapingControlCharacters``): a value a sender chose — a push's title, a device's ID — reaches the
/// terminal as text, and cannot retitle the window or erase and rewrite a log line.
///
/// `herald` bootstraps swift-log with it over swift-log's own `StreamLogHandler`; the lines are otherwise unchanged.
public struct EscapingLogHandler: LogHandler {
    private var wrapped: any LogHandler

    /// A handler that escapes what it hands to `wrapped`.
    ///
    /// - Parameter wrapped: The handler that writes the lines.
    public init(_ wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue.mapValues(Self.escaped) }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escaped) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: event.message.description.escapingControlCharacters)
        event.metadata = event.metadata?.mapValues(Self.escaped)
        wrapped.log(event: event)
    }

    /// A metadata value with its text escaped, nested values too.
    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(text.escapingControlCharacters)
        case .stringConvertible(let convertible):
            .string(convertible.description.escapingControlCharacters)
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        }
    }
}
