import ArgumentParser
import Dispatch
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import UserNotifications

extension HeraldCommand {
    /// Delivers an `.apns` file to an app on this device, as `xcrun simctl push` does to a simulator.
    struct Simulate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deliver an .apns file to an app on this device, as `xcrun simctl push` does (no provider, no gateway).",
            usage: "herald simulate [<bundle-identifier>] (<file.apns> | -)",
            discussion: """
                The file is a JSON object with `aps` (4,096 bytes at most, counted as `herald push` sends it: \
                compact, without the simulator's key), and names its app with a top-level \
                "Simulator Target Bundle" key unless the bundle identifier is given (which wins). `-` reads standard \
                input. An alert becomes a notification like a real push (apns-id: a new UUID; the "Simulator Target \
                Bundle" key is not part of the app's userInfo); a `content-available` push with nothing to show goes \
                to the app's fetch handler. `herald up` or `herald device`, or the app itself, presents it.
                """)

        @OptionGroup var data: DataDirectoryOptions
        @Argument(
            help: ArgumentHelp(
                "The app's bundle identifier (optional), then the .apns file or - for standard input.",
                valueName: "[bundle-identifier] file.apns"))
        var arguments: [String] = []

        /// The payload size `simctl push` accepts.
        static let maximumSize = 4_096
        static let targetKey = "Simulator Target Bundle"
        /// The largest file read: a pretty-printed payload of 4,096 bytes is larger than that on disk.
        static let largestFile = 1 << 20

        func validate() throws {
            guard (1...2).contains(arguments.count) else {
                throw ValidationError(
                    "Give the .apns file (or - for standard input), optionally after the app's bundle identifier.")
            }
        }

        func run() async throws {
            let file = arguments.last!
            let data = try await InputFile.data(file, option: "the payload")
            guard data.count <= Self.largestFile else {
                throw ValidationError(
                    "\(file) is \(data.count) bytes; a remote notification's payload is \(Self.maximumSize) bytes at most.")
            }
            let parsed: JSONValue?
            do {
                parsed = try JSONValue(parsing: data)
            } catch let error as JSONValue.ReadingError where error.unrepresentableNumber != nil {
                throw ValidationError("\(file): \(error). Send it as a string.")
            } catch {
                parsed = nil
            }
            guard case .object(let members)? = parsed else {
                throw ValidationError(
                    "\(file) is not a JSON object. An .apns file looks like {\"Simulator Target Bundle\":\"com.example.app\",\"aps\":{\"alert\":\"Hello\"}}."
                )
            }
            guard members.contains(where: { $0.key == "aps" && $0.value.isObject }) else {
                throw ValidationError("\(file) has no \"aps\" dictionary: a remote notification's payload needs one.")
            }
            let named = members.first { $0.key == Self.targetKey }?.value.stringValue
            guard let bundleIdentifier = arguments.count == 2 ? arguments[0] : named else {
                throw ValidationError(
                    "Which app? Give its bundle identifier before the file, or a \"\(Self.targetKey)\" key in the file.")
            }
            let payload = JSONValue.object(members.filter { $0.key != Self.targetKey })
            // Counted as `herald push` sends it: compact JSON, without the simulator's key.
            let size = payload.jsonText.utf8.count
            guard size <= Self.maximumSize else {
                throw ValidationError(
                    "The payload is \(size) bytes (compact, without \"\(Self.targetKey)\"); a remote notification's payload is \(Self.maximumSize) bytes at most."
                )
            }
            // As simctl needs the app installed: an unknown app is a mistake, and no entry is made for it.
            try self.data.requireExisting()
            let changes = NotificationChanges(self.data)
            let engine = try changes.localEngine()
            guard try await engine.bundleIdentifiers().contains(bundleIdentifier) else {
                throw CommandFailure(
                    "No app \(bundleIdentifier) on this device: an app is known once it has run (or herald settings \(bundleIdentifier) --allow names it); herald notifications list lists them"
                )
            }
            let strings =
                try await engine.appState(for: bundleIdentifier).bundlePath.map {
                    LocalizedStringTable.load(
                        bundlePath: $0,
                        languages: LocalizedStringTable.preferredLanguages(environment: ProcessInfo.processInfo.environment))
                } ?? LocalizedStringTable()
            let content = try RemoteNotificationContent(payload: payload, strings: strings)
            let apnsID = UUID().uuidString
            if content.contentAvailable {
                // The fetch handler runs for every content-available push, beside what it shows (PayloadReading).
                try await changes.apply(.receiveBackground(payload: payload.jsonText), for: bundleIdentifier)
                print(
                    "\(bundleIdentifier): background push delivered (the app's fetch handler gets it while it runs, or at its next start)"
                )
            }
            let request = NotificationRequestRecord(remote: content, apnsID: apnsID, collapseID: nil)
            switch content.reading.kind {
            case .alert:
                let reception = try await changes.apply(.receiveRemote(request), for: bundleIdentifier)
                print(
                    reception == .reception(.notAllowed)
                        ? "\(bundleIdentifier): not shown (notifications are off for this app)"
                        : "\(bundleIdentifier): delivered \(apnsID)")
            case .badgeOnly, .soundOnly, .badgeAndSound:
                let reception = try await changes.apply(.receiveUnlisted(request), for: bundleIdentifier)
                print(
                    reception == .reception(.notAllowed)
                        ? "\(bundleIdentifier): not applied (notifications are off for this app)"
                        : "\(bundleIdentifier): badge or sound applied, nothing listed (no alert to show)")
            case .background:
                break
            case .nothing, .malformed:
                throw ValidationError(
                    "Notification has no user visible content: give aps an alert, sound or badge, or content-available: 1.")
            }
        }
    }
}
