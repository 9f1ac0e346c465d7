import Dispatch
import Foundation
import PushKit

/// A calling app, as in Apple's "Responding to VoIP Notifications from PushKit": it asks for VoIP pushes on a queue of
/// its own, prints its VoIP token for its provider, and prints each incoming call (where it was called: on the
/// registry's queue or not).
final class CallDelegate: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    static let queueKey = DispatchSpecificKey<String>()

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        let token = pushCredentials.token.map { String(format: "%02x", $0) }.joined()
        say("voip token: \(token) type=\(type.rawValue) queue=\(DispatchQueue.getSpecific(key: Self.queueKey) ?? "other")")
    }

    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping () -> Void
    ) {
        let caller = payload.dictionaryPayload["caller"] as? String ?? "unknown"
        say(
            "incoming call from \(caller) type=\(type.rawValue) queue=\(DispatchQueue.getSpecific(key: Self.queueKey) ?? "other")"
        )
        completion()
    }

    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        say("voip token invalidated")
    }
}

/// One line on standard output, written at once (a test reads it as it comes).
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

@main
struct CallApp {
    static func main() async {
        let queue = DispatchQueue(label: "com.example.voip.pushkit")
        queue.setSpecific(key: CallDelegate.queueKey, value: "pushkit")
        let delegate = CallDelegate()
        let registry = PKPushRegistry(queue: queue)
        registry.delegate = delegate
        registry.desiredPushTypes = [.voIP]
        while true {
            try? await Task.sleep(for: .seconds(3600))
            withExtendedLifetime((registry, delegate)) {}
        }
    }
}
