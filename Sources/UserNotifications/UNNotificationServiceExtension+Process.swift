import Dispatch
import Foundation
import HeraldCore
import HeraldDeviceProtocol
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
        // The expiry signal's handler exists before "ready" is written: the daemon may send it the moment it reads that
        // line (a push whose time ran out while the process started), and none is ever lost (ExpirySignal).
        ExpirySignal.install { request in current.expire(request: request) }
        if let path = environment[requestVariable] {
            guard let data = FileManager.default.contents(atPath: path),
                let record = try? JSONDecoder().decode(NotificationRequestRecord.self, from: data)
            else { usage() }
            ready()
            let only = UncheckedSendableBox(serviceExtension)
            DispatchQueue.main.async {
                current.begin(only.value, request: 1)
                handle(record, with: only.value) { exit(0) }
                current.received()
            }
        } else if environment[warmVariable] == "1" {
            ready()
            // Requests one at a time, each to a new instance (of the @main class), as long as standard input is open;
            // the n-th line is request n, which is what the daemon's expiry signal for it carries.
            let made = UncheckedSendableBox(serviceExtension)
            let kind = type(of: serviceExtension)
            let reader = Thread {
                var first: UNNotificationServiceExtension? = made.value
                var number: Int32 = 0
                while let line = readLine() {
                    number &+= 1
                    guard let record = try? JSONDecoder().decode(NotificationRequestRecord.self, from: Data(line.utf8)) else {
                        write(Answer(content: nil, error: "not a notification request"))
                        continue
                    }
                    let instance = first ?? kind.init()
                    first = nil
                    let done = DispatchSemaphore(value: 0)  // this reader's own thread waits, nothing else
                    let call = UncheckedSendableBox(instance)
                    let request = number
                    DispatchQueue.main.async {
                        current.begin(call.value, request: request)
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

    /// The request being handled, for `SIGUSR1`: a signal names the request whose time ran out (its number: the
    /// daemon sends it with `sigqueue`), so one that comes before that request's `didReceive` was called waits for it
    /// (Apple calls `serviceExtensionTimeWillExpire()` only after `didReceive`), and one for a request already
    /// answered is not taken for the next. A plain `kill -USR1` (number 0) is for the request being handled, or the
    /// next. Used on the main queue only.
    private final class CurrentExtension: @unchecked Sendable {
        private var instance: UNNotificationServiceExtension?
        private var request: Int32 = 0
        private var didReceive = false
        private var expiryCalled = false
        /// The highest request number whose time ran out.
        private var expiredThrough: Int32 = 0

        /// Request number `request` starts with `instance`.
        func begin(_ instance: UNNotificationServiceExtension, request: Int32) {
            self.instance = instance
            self.request = request
            didReceive = false
            expiryCalled = false
        }

        /// Its `didReceive` was called: an expiry that came first is delivered now.
        func received() {
            guard instance != nil else { return }
            didReceive = true
            expireIfDue()
        }

        /// It was answered: a signal from now on is for a later request.
        func end() {
            instance = nil
            didReceive = false
        }

        /// `SIGUSR1` for request number `number` (0: the current one, or the next).
        func expire(request number: Int32) {
            let number = number != 0 ? number : (instance != nil ? request : request &+ 1)
            expiredThrough = max(expiredThrough, number)
            expireIfDue()
        }

        private func expireIfDue() {
            guard let instance, didReceive, !expiryCalled, expiredThrough >= request else { return }
            expiryCalled = true
            instance.serviceExtensionTimeWillExpire()
        }
    }
}

/// `SIGUSR1` for a service extension, caught by a handler of its own (`sigaction`) that writes the request number
/// the signal carries (`sigqueue`'s value; 0 for a plain `kill`) to a pipe the main queue reads.
///
/// Why not a `DispatchSource` signal source: on Linux libdispatch installs its handler only when the source is first
/// registered, on the main queue, after `dispatchMain()`; a signal that comes before that — the daemon sends it the
/// moment it reads "ready" when the push's time already ran out — meets the process's `SIG_IGN` and is lost, and with
/// it the best attempt (the cause of issue 63's B-51 failure). The handler here is installed before "ready" is
/// written, and whichever thread takes the signal, its number waits in the pipe until the main queue reads it.
private enum ExpirySignal {
    /// The pipe's write end, for the handler (set once, before the handler is installed).
    nonisolated(unsafe) static var writeEnd: Int32 = -1
    nonisolated(unsafe) private static var source: (any DispatchSourceRead)?

    /// Installs the handler; `expire` runs on the main queue with each signal's request number.
    static func install(_ expire: @escaping @Sendable (Int32) -> Void) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        writeEnd = ends[1]
        let readEnd = ends[0]
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .main)
        source.setEventHandler {
            var number: Int32 = 0
            while withUnsafeMutableBytes(of: &number, { read(readEnd, $0.baseAddress, 4) }) == 4 { expire(number) }
        }
        source.resume()
        self.source = source
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = expirySignalHandler
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(SIGUSR1, &action, nil)
    }
}

/// The handler: async-signal-safe (one `write` of four bytes to a non-blocking pipe; `errno` kept).
private func expirySignalHandler(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _: UnsafeMutableRawPointer?) {
    let saved = errno
    var number: Int32 = 0
    if let info, info.pointee.si_code == SI_QUEUE { number = info.pointee._sifields._rt.si_sigval.sival_int }
    _ = withUnsafeBytes(of: &number) { write(ExpirySignal.writeEnd, $0.baseAddress, 4) }
    errno = saved
}
