import ArgumentParser
import Foundation
import HeraldCore
import HeraldProvider
import Logging
import Synchronization
import UnixSignals

extension HeraldCommand {
    /// Sends a remote notification, as a provider server does.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a remote notification to Apple's APNs or a Herald gateway.",
            discussion: """
                Prints one line per token as its answer comes: `<token> 200 <apns-id> <apns-unique-id>` (the last from a sandbox or a Herald gateway: `herald log` and the console find it), or the status and Apple's reason (`410 Unregistered since …`). \
                Exits 1 if any token failed. Retries only where Apple says to (429, 500, 503). Ctrl-C (SIGINT) or SIGTERM stops sending: the pushes in flight are answered and printed, then it exits 130 (143), saying how many were not sent; a second one quits at once.
                """)

        @OptionGroup var credentials: ProviderCredentialOptions
        @OptionGroup var data: DataDirectoryOptions
        @Option(help: "A PEM file with a client certificate and its key, instead of a .p8 key (or HERALD_CERT).")
        var cert: String?
        @Option(help: "The app's bundle ID; the push type's suffix is added.") var topic: String
        @Option(name: .customLong("token"), help: "A device token, hex; repeat for several.") var tokens: [String] = []
        @Option(
            help:
                "A broadcast channel (apns-channel-id): publish a Live Activity update to every device subscribed to it instead of to device tokens (POST /4/broadcasts/apps/<topic>; --push-type liveactivity, --expiration 0 by default)."
        )
        var channel: String?
        @Option(help: "A file with one device token per line.") var tokensFile: String?
        @Flag(help: "Apple's development environment (api.sandbox.push.apple.com).") var sandbox = false
        @Flag(help: "Apple's production environment (api.push.apple.com).") var production = false
        @Option(help: "A Herald gateway, e.g. https://localhost:2197.") var gateway: String?
        @Option(help: "The CA to trust for --gateway (default: <data-dir>/tls/ca.pem when it exists).") var cacert: String?

        @Option(help: "Alert text (the body).") var alert: String?
        @Option(help: "Alert title.") var title: String?
        @Option(help: "Alert subtitle.") var subtitle: String?
        @Option(help: "Alert body.") var body: String?
        @Option(parsing: .unconditional, help: "Badge number; 0 removes it.") var badge: Int?
        @Option(help: "Sound name; default is the system sound.") var sound: String?
        @Option(help: "Category identifier.") var category: String?
        @Option(help: "Thread identifier.") var threadId: String?
        @Flag(help: "Let a notification service extension change it.") var mutableContent = false
        @Flag(help: "Wake the app in the background.") var contentAvailable = false
        @Option(
            help:
                "A JSON file the options above are merged into, key by key: --title/--subtitle/--body set those keys of its aps.alert and keep the others (a string alert is its body), the other options their aps keys; its custom keys are sent as they are."
        ) var payload: String?
        @Option(
            help:
                "apns-push-type (default: background when the payload, --payload included, has content-available and nothing visible; else alert)."
        )
        var pushType: String?
        @Option(help: "apns-priority: 10, 5 or 1.") var priority: Int?
        @Option(parsing: .unconditional, help: "apns-expiration: a UNIX time, or 0 for one attempt only.") var expiration: Int64?
        @Option(help: "apns-collapse-id.") var collapseId: String?
        @Option(help: "apns-id (a UUID).") var apnsId: String?
        @Option(help: "Requests in flight at once.") var concurrency = 100
        @Option(help: "HTTP/2 connections to spread the requests over (1-16); Apple suggests several for big batches.")
        var connections = 1

        func run() async throws {
            guard concurrency >= 1 else { throw ValidationError("--concurrency takes a number of requests, 1 or more.") }
            guard (1...16).contains(connections) else { throw ValidationError("--connections takes 1 to 16.") }
            let server = try server()
            let authentication = try await credentials.authentication(cert: cert)
            if let channel {
                try await broadcast(on: channel, server: server, authentication: authentication)
                return
            }
            let tokens = try await deviceTokens()
            let notification = try await notification()
            var logger = Logger(label: "herald.push")
            logger.logLevel = .error
            let client = try APNsClient(
                server: server, authentication: authentication, logger: logger, connections: connections)
            // A progress bar for a person at a terminal, not for a log file.
            let showProgress = tokens.count >= 100 && isatty(STDERR_FILENO) != 0
            // The first SIGINT or SIGTERM stops the sending: nothing more is sent, the pushes in flight are answered
            // and each gets its line; a second one ends at once.
            let interruption = Interruption()
            let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
            let watcher = Task {
                for await signal in signals {
                    guard interruption.note(signal.rawValue) else { Foundation.exit(128 + signal.rawValue) }
                    FileHandle.standardError.write(
                        Data(
                            "\nInterrupted: nothing more is sent; the pushes in flight are answered and printed (again to quit at once).\n"
                                .utf8))
                }
            }
            defer { watcher.cancel() }
            let results: [APNsResult]
            do {
                results = try await client.send(
                    notification, to: tokens, concurrency: concurrency,
                    progress: { done, total in
                        guard showProgress, done == total || done % max(1, total / 100) == 0 else { return }
                        let width = 30
                        let filled = width * done / total
                        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
                        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total)\(done == total ? "\n" : "")".utf8))
                    },
                    // Each line as its answer comes, written at once: an interruption loses none.
                    answered: { result in
                        FileHandle.standardOutput.write(
                            Data("\(result.deviceToken) \(Self.describe(result))\n".utf8))
                    },
                    stopped: { interruption.signal != nil })
            } catch let reason as APNsReason {
                try? await client.shutdown()
                throw CommandFailure("Not sent: APNs would answer \(reason). \(Self.advice(for: reason, notification))")
            }
            try await client.shutdown()
            if let signal = interruption.signal {
                FileHandle.standardError.write(
                    Data(
                        "Interrupted: \(results.count) of \(tokens.count) pushes sent and answered (one line each above); \(tokens.count - results.count) not sent.\n"
                            .utf8))
                throw ExitCode(128 + signal)
            }
            if results.contains(where: { !$0.isSuccess }) { throw ExitCode(1) }
        }

        /// Publishes the notification on a broadcast channel and prints `channel <id> <status> <apns-request-id>`.
        private func broadcast(on channel: String, server: APNsServer, authentication: APNsAuthentication) async throws {
            guard tokens.isEmpty && tokensFile == nil else {
                throw ValidationError("Give --channel ID or device tokens (--token, --tokens-file), not both.")
            }
            if let pushType, pushType != APNsPushType.liveactivity.rawValue {
                throw ValidationError(
                    "Broadcasts are Live Activity updates: --push-type liveactivity (the default with --channel).")
            }
            var notification = try await notification(defaultType: .liveactivity)
            notification.apnsID = nil
            var logger = Logger(label: "herald.push")
            logger.logLevel = .error
            let client = try APNsClient(server: server, authentication: authentication, logger: logger)
            let result: APNsResult
            do {
                result = try await client.broadcast(notification, on: channel)
            } catch let reason as APNsReason {
                try? await client.shutdown()
                throw CommandFailure("Not sent: APNs would answer \(reason). \(Self.advice(for: reason, notification))")
            }
            try await client.shutdown()
            let text = result.isSuccess ? "200 \(result.requestID ?? "")" : Self.describe(result)
            print("channel \(channel) \(text)")
            if !result.isSuccess { throw ExitCode(1) }
        }

        static func describe(_ result: APNsResult) -> String {
            // The apns-unique-id (sandbox only, R-03) finds it in the delivery log: `herald log`, the console.
            if result.isSuccess { return "200 \(result.apnsID ?? "")" + (result.uniqueID.map { " \($0)" } ?? "") }
            if result.status == 0 {
                let failure = result.failure ?? "no answer"
                // A gateway's own CA is not in the system's trust store: say which file to trust.
                let hint =
                    failure.contains("certificate is not trusted")
                    ? "; pass --cacert with the CA that issued it (a Herald gateway's: <data-dir>/tls/ca.pem)" : ""
                return "failed: \(failure)\(hint)"
            }
            var text = "\(result.status) \(result.reasonText ?? "")"
            if let timestamp = result.timestamp { text += " since \(timestamp.formatted(.iso8601))" }
            return text
        }

        static func advice(for reason: APNsReason, _ notification: APNsNotification) -> String {
            switch reason {
            case .payloadTooLarge:
                "The payload is \(notification.payload.count) bytes; \(notification.pushType.rawValue) allows \(notification.pushType.maximumPayloadSize)."
            case .badRequestPayload, .payloadEmpty: "The payload must be a JSON object."
            case .badCollapseId: "--collapse-id takes at most 64 bytes."
            case .badPriority: "Background pushes take --priority 5."
            case .badTopic, .invalidPushType: "--topic takes the bundle ID; --push-type adds the suffix."
            default: ""
            }
        }

        private func server() throws -> APNsServer {
            let chosen = [sandbox, production, gateway != nil].filter { $0 }.count
            guard chosen == 1 else { throw ValidationError("Choose one of --sandbox, --production or --gateway URL.") }
            if sandbox { return .development }
            if production { return .production }
            guard let gateway, let url = URL(string: gateway), url.scheme == "https" || url.scheme == "http", url.host != nil
            else {
                throw ValidationError("--gateway takes a URL such as https://localhost:2197.")
            }
            return APNsServer(url: url, certificateAuthorityFile: try data.directory.trustedCA(explicit: cacert))
        }

        private func deviceTokens() async throws -> [String] {
            for token in tokens {
                if let problem = Self.tokenProblem(token) { throw ValidationError("--token \(token) \(problem).") }
            }
            var all = tokens
            if let tokensFile {
                let text = try await InputFile.text(tokensFile, option: "--tokens-file")
                // One token a line; blank lines and `#` comments are skipped.
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let token = line.trimmingCharacters(in: .whitespacesAndNewlines)
                    guard !token.isEmpty, !token.hasPrefix("#") else { continue }
                    if let problem = Self.tokenProblem(token) {
                        throw ValidationError("--tokens-file \(tokensFile), line \(index + 1): \(token) \(problem).")
                    }
                    all.append(token)
                }
            }
            guard !all.isEmpty else { throw ValidationError("Give at least one --token HEX or a --tokens-file.") }
            return all
        }

        /// What is wrong with a device token as given, or `nil` when it is one.
        static func tokenProblem(_ token: String) -> String? {
            guard DeviceToken(hex: token) == nil else { return nil }
            if token.contains(where: { !$0.isHexDigit }) {
                return "is not a device token: it has characters other than hex digits (0-9, a-f)"
            }
            return token.count % 2 == 1
                ? "is not a device token: an odd number of hex digits (a token is whole bytes)"
                : "is not a device token: longer than \(DeviceToken.maximumByteCount) bytes"
        }

        private func notification(defaultType: APNsPushType? = nil) async throws -> APNsNotification {
            guard APNsRequestHeaders.isValidTopic(topic) else {
                throw ValidationError("--topic takes a bundle ID such as com.example.app.")
            }
            if let badge, badge < 0 { throw ValidationError("--badge takes 0 or more (0 removes the badge); got \(badge).") }
            if let expiration, expiration < 0 {
                throw ValidationError(
                    "--expiration takes a UNIX time (seconds since 1970), or 0 for one attempt only; got \(expiration).")
            }
            var aps = APNsPayload(
                badge: badge, sound: sound.map(APNsPayload.Sound.named), threadIdentifier: threadId,
                categoryIdentifier: category, contentAvailable: contentAvailable, mutableContent: mutableContent)
            if title != nil || subtitle != nil || body != nil {
                if alert != nil { throw ValidationError("Give --alert TEXT or --title/--subtitle/--body, not both.") }
                aps.alert = .fields(.init(title: title, subtitle: subtitle, body: body))
            } else if let alert {
                aps.alert = .text(alert)
            }
            var json = aps.jsonValue
            if let payload {
                let data = try await InputFile.data(payload, option: "--payload")
                let parsed: JSONValue?
                do {
                    parsed = try JSONValue(parsing: data)
                } catch let error as JSONValue.ReadingError where error.unrepresentableNumber != nil {
                    throw CommandFailure("--payload \(payload): \(error). Send it as a string.")
                } catch {
                    parsed = nil
                }
                guard let file = parsed, case .object = file else {
                    throw CommandFailure("--payload \(payload) is not a JSON object.")
                }
                json = Self.merge(options: json, over: file)
            }
            let resolvedType: APNsPushType
            if let pushType {
                guard let type = APNsPushType(rawValue: pushType), type.isProviderType else {
                    throw ValidationError(
                        "--push-type \(pushType) is not one of \(APNsPushType.providerTypes.map(\.rawValue).joined(separator: ", "))."
                    )
                }
                resolvedType = type
            } else if let defaultType {
                resolvedType = defaultType
            } else {
                // What the gateway or APNs would infer from the payload sent, --payload file included.
                resolvedType = .inferred(from: PayloadReading(payload: json))
            }
            var priorityValue: APNsPriority?
            if let priority {
                guard let value = APNsPriority(rawValue: priority) else { throw ValidationError("--priority takes 10, 5 or 1.") }
                priorityValue = value
            } else if resolvedType == .background {
                priorityValue = .throttled
            }
            var uuid: UUID?
            if let apnsId {
                guard APNsRequestHeaders.isCanonicalUUID(apnsId), let value = UUID(uuidString: apnsId) else {
                    throw ValidationError("--apns-id takes a UUID such as 123e4567-e89b-12d3-a456-4266554400a0.")
                }
                uuid = value
            }
            let suffixed =
                APNsPushType.split(topic: topic).suffixType == nil && resolvedType != .mdm
                ? topic + resolvedType.topicSuffix : topic
            return APNsNotification(
                pushType: resolvedType, topic: suffixed, priority: priorityValue,
                expiration: expiration.map { $0 == 0 ? .immediately : .at(Date(timeIntervalSince1970: Double($0))) }
                    ?? .storagePolicy,
                collapseID: collapseId, apnsID: uuid, payload: Data(json.jsonText.utf8))
        }

        /// The file's payload with the options' `aps` keys laid over its `aps`, key by key (options win): an `alert`
        /// from `--title`/`--subtitle`/`--body` sets those keys of the file's alert and keeps its others (`body`,
        /// `loc-key`…), a string alert on either side being its `body` (as APNs reads it).
        static func merge(options: JSONValue, over file: JSONValue) -> JSONValue {
            guard case .object(var members) = file, case .object(let optionMembers) = options,
                case .object(let optionAPS)? = optionMembers.first(where: { $0.key == "aps" })?.value
            else { return file }
            var aps: [JSONValue.Member] = []
            if let index = members.firstIndex(where: { $0.key == "aps" }) {
                if case .object(let existing) = members[index].value { aps = existing }
                members.remove(at: index)
            }
            for var member in optionAPS {
                if let index = aps.firstIndex(where: { $0.key == member.key }) {
                    if member.key == "alert" { member.value = mergeAlert(member.value, over: aps[index].value) }
                    aps[index] = member
                } else {
                    aps.append(member)
                }
            }
            return .object([.init("aps", .object(aps))] + members)
        }

        /// An alert from the options laid over the file's: two strings, the options'; otherwise both as objects (a
        /// string is the `body`), the options' keys over the file's.
        private static func mergeAlert(_ option: JSONValue, over file: JSONValue) -> JSONValue {
            func fields(_ alert: JSONValue) -> [JSONValue.Member]? {
                switch alert {
                case .object(let members): members
                case .string(let text): [.init("body", .string(text))]
                default: nil
                }
            }
            if case .string = option, case .string = file { return option }
            guard let optionFields = fields(option), var merged = fields(file) else { return option }
            for field in optionFields {
                if let index = merged.firstIndex(where: { $0.key == field.key }) {
                    merged[index] = field
                } else {
                    merged.append(field)
                }
            }
            return .object(merged)
        }
    }
}
