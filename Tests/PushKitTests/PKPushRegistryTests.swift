import Dispatch
import Foundation
import Synchronization
import Testing

@testable import PushKit

/// PushKit's types and the registry's side of the daemon's news, in-process (the daemon end to end:
/// `PushKitEndToEndTests` in HeraldCommandTests).
@Suite(.timeLimit(.minutes(1))) struct PKPushRegistryTests {
    /// Records what a registry tells its delegate, and on which queue.
    final class Delegate: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
        static let queueKey = DispatchSpecificKey<String>()
        let events = Mutex<[String]>([])
        /// Whether a push's completion is called (a delegate that never calls it runs out the budget).
        let completes: Bool

        init(completes: Bool = true) { self.completes = completes }

        private func record(_ event: String) {
            events.withLock { $0.append("\(event) on \(DispatchQueue.getSpecific(key: Self.queueKey) ?? "another queue")") }
        }

        func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
            let hex = pushCredentials.token.map { String(format: "%02x", $0) }.joined()
            record("didUpdate \(type.rawValue) \(pushCredentials.type.rawValue) \(hex)")
        }

        func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
            record("didInvalidate \(type.rawValue)")
        }

        func pushRegistry(
            _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
            completion: @escaping () -> Void
        ) {
            record("push \(payload.type.rawValue) \(payload.dictionaryPayload["caller"] as? String ?? "-")")
            if completes { completion() }
        }
    }

    /// The iOS 8–10 form only: the protocol's default calls it, then the completion.
    final class OldDelegate: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
        let pushes = Mutex(0)
        func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {}
        func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType) {
            pushes.withLock { $0 += 1 }
        }
    }

    static func queue() -> DispatchQueue {
        let queue = DispatchQueue(label: "calls")
        queue.setSpecific(key: Delegate.queueKey, value: "calls")
        return queue
    }

    /// Waits (bounded) until `delegate` has `count` events.
    static func events(_ delegate: Delegate, count: Int) async throws -> [String] {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while delegate.events.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        return delegate.events.withLock { $0 }
    }

    @Test("P-10: PKPushType's raw values are Apple's")
    func pushTypes() {
        #expect(PKPushType.voIP.rawValue == "PKPushTypeVoIP")
        #expect(PKPushType.fileProvider.rawValue == "PKPushTypeFileProvider")
        #expect(PKPushType.complication.rawValue == "PKPushTypeComplication")
        #expect(PKPushType(rawValue: "PKPushTypeVoIP") == .voIP)
    }

    @Test(
        "A token the daemon issues is kept (pushToken(for:)) and told to the delegate on the registry's queue; revoked, it is forgotten and told"
    )
    func tokens() async throws {
        let registry = PKPushRegistry(queue: Self.queue())
        let delegate = Delegate()
        registry.delegate = delegate
        #expect(registry.pushToken(for: .voIP) == nil)
        registry.tokenIssued(Data([0xAB, 0x01]), for: .voIP)
        #expect(registry.pushToken(for: .voIP) == Data([0xAB, 0x01]))
        registry.tokenInvalidated(for: .voIP)
        #expect(registry.pushToken(for: .voIP) == nil)
        #expect(
            try await Self.events(delegate, count: 2) == [
                "didUpdate PKPushTypeVoIP PKPushTypeVoIP ab01 on calls", "didInvalidate PKPushTypeVoIP on calls",
            ])
    }

    @Test("A push reaches the delegate on the registry's queue with its payload; handled once the delegate calls its completion")
    func deliver() async throws {
        let registry = PKPushRegistry(queue: Self.queue())
        let delegate = Delegate()
        registry.delegate = delegate
        let handled = await registry.deliver(["caller": "Ana"], of: .voIP, within: .seconds(30))
        #expect(handled)
        #expect(delegate.events.withLock { $0 } == ["push PKPushTypeVoIP Ana on calls"])
    }

    @Test(
        "A push without a delegate is not handled (the daemon keeps it); one whose completion never comes is not handled once the budget runs out"
    )
    func notHandled() async throws {
        let registry = PKPushRegistry(queue: Self.queue())
        #expect(await registry.deliver(["caller": "Bo"], of: .voIP, within: .seconds(30)) == false)
        let silent = Delegate(completes: false)
        registry.delegate = silent
        #expect(await registry.deliver(["caller": "Bo"], of: .voIP, within: .milliseconds(50)) == false)
        #expect(silent.events.withLock { $0 } == ["push PKPushTypeVoIP Bo on calls"])
    }

    @Test("A delegate with only the iOS 8–10 method gets the push, and the push counts as handled")
    func oldDelegate() async throws {
        let registry = PKPushRegistry(queue: Self.queue())
        let delegate = OldDelegate()
        registry.delegate = delegate
        #expect(await registry.deliver(["caller": "Cy"], of: .voIP, within: .seconds(30)))
        #expect(delegate.pushes.withLock { $0 } == 1)
    }
}
