import Dispatch
import Foundation
import HeraldCore

extension UNNotificationServiceExtension {
    /// The extension process's entry point when the subclass is marked `@main`: the device daemon starts it for one
    /// push, it calls ``didReceive(_:withContentHandler:)`` with the push's request, and the content given to the
    /// handler goes back to the daemon; `SIGUSR1` means the time is running out (``serviceExtensionTimeWillExpire()``).
    ///
    /// The daemon names the request's file in `HERALD_SERVICE_EXTENSION_REQUEST`; the answer is one line of JSON on
    /// standard output. Started any other way, it says what it is and exits.
    public static func main() {
        ServiceExtensionProcess.run(Self())
    }
}

/// The extension's side of its conversation with the daemon (a file in, a line out, a signal for the deadline).
package enum ServiceExtensionProcess {
    package static let requestVariable = "HERALD_SERVICE_EXTENSION_REQUEST"
    /// What the extension writes once it can take `SIGUSR1`.
    package static let readyLine = #"{"ready":true}"# + "\n"

    /// What the extension answers: the content to show, or why there is none.
    package struct Answer: Codable, Sendable {
        package var content: NotificationContentRecord?
        package var error: String?
    }

    static func run(_ serviceExtension: UNNotificationServiceExtension) -> Never {
        guard let path = ProcessInfo.processInfo.environment[requestVariable],
              let data = FileManager.default.contents(atPath: path),
              let record = try? JSONDecoder().decode(NotificationRequestRecord.self, from: data)
        else {
            FileHandle.standardError.write(Data(
                "This is a notification service extension: the Herald device daemon runs it for pushes with mutable-content (see \(requestVariable)).\n".utf8))
            exit(64)
        }
        let request = UNNotificationRequest(record: record, context: .standalone)
        let answered = NSLock()
        nonisolated(unsafe) var done = false
        let handler: (UNNotificationContent) -> Void = { content in
            let first = answered.withLock { () -> Bool in
                defer { done = true }
                return !done
            }
            guard first else { return }
            var answer = Answer()
            do {
                answer.content = try content.makeRecord()
            } catch {
                answer.error = "\(error)"
            }
            let line = (try? JSONEncoder().encode(answer)) ?? Data(#"{"error":"unencodable"}"#.utf8)
            FileHandle.standardOutput.write(line + Data("\n".utf8))
            exit(0)
        }
        let box = UncheckedSendableBox((serviceExtension, handler))
        signal(SIGUSR1, SIG_IGN)
        let expiry = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .main)
        expiry.setEventHandler { box.value.0.serviceExtensionTimeWillExpire() }
        expiry.resume()
        // Ready for the deadline's signal: the daemon does not send it before this line (it would end the process).
        FileHandle.standardOutput.write(Data(readyLine.utf8))
        DispatchQueue.main.async {
            box.value.0.didReceive(request, withContentHandler: box.value.1)
        }
        dispatchMain()
    }

}
