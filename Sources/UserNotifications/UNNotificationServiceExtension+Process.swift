import Dispatch
import Foundation
import HeraldCore
import HeraldNotificationEngine

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

/// The extension's side of its conversation with the daemon.
extension ServiceExtensionProcess {
    static func run(_ serviceExtension: UNNotificationServiceExtension) -> Never {
        let environment = ProcessInfo.processInfo.environment
        let current = CurrentExtension()
        signal(SIGUSR1, SIG_IGN)
        let expiry = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .main)
        expiry.setEventHandler { current.expire() }
        expiry.resume()
        if let path = environment[requestVariable] {
            guard let data = FileManager.default.contents(atPath: path),
                let record = try? JSONDecoder().decode(NotificationRequestRecord.self, from: data)
            else { usage() }
            ready()
            let only = UncheckedSendableBox(serviceExtension)
            DispatchQueue.main.async {
                current.begin(only.value)
                handle(record, with: only.value) { exit(0) }
                current.received()
            }
        } else if environment[warmVariable] == "1" {
            ready()
            // Requests one at a time, each to a new instance (of the @main class), as long as standard input is open.
            let made = UncheckedSendableBox(serviceExtension)
            let kind = type(of: serviceExtension)
            let reader = Thread {
                var first: UNNotificationServiceExtension? = made.value
                while let line = readLine() {
                    guard let record = try? JSONDecoder().decode(NotificationRequestRecord.self, from: Data(line.utf8)) else {
                        write(Answer(content: nil, error: "not a notification request"))
                        continue
                    }
                    let instance = first ?? kind.init()
                    first = nil
                    let done = DispatchSemaphore(value: 0)  // this reader's own thread waits, nothing else
                    let call = UncheckedSendableBox(instance)
                    DispatchQueue.main.async {
                        current.begin(call.value)
                        handle(record, with: call.value) {
                            current.end()
                            done.signal()
                        }
                        current.received()
                    }
                    done.wait()
                }
                exit(0)
            }
            reader.start()
        } else {
            usage()
        }
        dispatchMain()
    }

    /// Calls the extension with the request; `answered` runs once its content has been written.
    private static func handle(
        _ record: NotificationRequestRecord, with serviceExtension: UNNotificationServiceExtension,
        answered: @escaping @Sendable () -> Void
    ) {
        let once = NSLock()
        nonisolated(unsafe) var done = false
        serviceExtension.didReceive(UNNotificationRequest(record: record, context: .standalone)) { content in
            let first = once.withLock { () -> Bool in
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
            write(answer)
            answered()
        }
    }

    private static func write(_ answer: Answer) {
        let line = (try? JSONEncoder().encode(answer)) ?? Data(#"{"error":"unencodable"}"#.utf8)
        FileHandle.standardOutput.write(line + Data("\n".utf8))
    }

    /// Ready for the deadline's signal: the daemon does not send it before this line (it would end the process).
    private static func ready() {
        FileHandle.standardOutput.write(Data(readyLine.utf8))
    }

    private static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                "This is a notification service extension: the Herald device daemon runs it for pushes with mutable-content (see \(requestVariable)).\n"
                    .utf8))
        exit(64)
    }

    /// The request being handled, for `SIGUSR1`: the signal is for the request the daemon sent last, so one that comes
    /// before that request's `didReceive` was called waits for it (Apple calls `serviceExtensionTimeWillExpire()` only
    /// after `didReceive`). Used on the main queue only.
    private final class CurrentExtension: @unchecked Sendable {
        private var instance: UNNotificationServiceExtension?
        private var didReceive = false
        private var expiryPending = false

        /// A request starts with `instance`.
        func begin(_ instance: UNNotificationServiceExtension) {
            self.instance = instance
            didReceive = false
        }

        /// Its `didReceive` was called: an expiry that came first is delivered now.
        func received() {
            guard instance != nil else { return }
            didReceive = true
            if expiryPending {
                expiryPending = false
                instance?.serviceExtensionTimeWillExpire()
            }
        }

        /// It was answered: a signal from now on is for the next request.
        func end() {
            instance = nil
            didReceive = false
        }

        /// `SIGUSR1`.
        func expire() {
            if let instance, didReceive {
                instance.serviceExtensionTimeWillExpire()
            } else {
                expiryPending = true
            }
        }
    }
}
