import Dispatch
import Foundation
import HeraldCore
import Logging
import Synchronization

/// Asks for the app's PushKit pushes and hands them to its delegate, on the queue it was made with.
///
/// ```swift
/// let registry = PKPushRegistry(queue: .main)
/// registry.delegate = self
/// registry.desiredPushTypes = [.voIP]     // didUpdate brings the VoIP token; VoIP pushes come to didReceiveIncomingPushWith
/// ```
///
/// The device daemon issues the token (topic `<bundle>.voip`) and keeps each VoIP push until a registry of the app takes
/// it — the app need not run when it is sent. Without a daemon there are no tokens (logged).
open class PKPushRegistry: NSObject {
    /// Gets the tokens and the pushes.
    weak open var delegate: (any PKPushRegistryDelegate)?

    /// The kinds of pushes the app wants; setting it asks for their tokens (and revokes the ones no longer wanted).
    /// Herald's device delivers `.voIP` only.
    open var desiredPushTypes: Set<PKPushType>? {
        get { state.withLock { $0.desired } }
        set {
            let (wanted, dropped) = state.withLock { state -> (Bool, Bool) in
                let had = state.desired?.contains(.voIP) == true
                state.desired = newValue
                let wants = newValue?.contains(.voIP) == true
                return (wants && !had, had && !wants)
            }
            if wanted { PushKitCenter.shared.start(self) }
            if dropped { PushKitCenter.shared.stop(self) }
        }
    }

    private struct State {
        var desired: Set<PKPushType>?
        var tokens: [PKPushType: Data] = [:]
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue?

    /// A registry whose delegate is called on `queue` (the main queue when `nil`).
    public init(queue: DispatchQueue?) {
        self.queue = queue
        super.init()
    }

    /// The app's token for `type`, once issued.
    open func pushToken(for type: PKPushType) -> Data? {
        state.withLock { $0.tokens[type] }
    }

    /// Whether it wants VoIP pushes now.
    var wantsVoIP: Bool { state.withLock { $0.desired?.contains(.voIP) == true } }

    /// Runs `call` on the registry's queue.
    func onQueue(_ call: @escaping @Sendable () -> Void) {
        if let queue { queue.async(execute: call) } else { DelegateQueue.run(call) }
    }

    /// The daemon issued the token: kept, then told to the delegate.
    func tokenIssued(_ token: Data, for type: PKPushType) {
        state.withLock { $0.tokens[type] = token }
        let registry = UncheckedSendableBox(self)
        onQueue {
            let credentials = PKPushCredentials(type: type, token: token)
            registry.value.delegate?.pushRegistry(registry.value, didUpdate: credentials, for: type)
        }
    }

    /// The token is revoked: forgotten, then told to the delegate.
    func tokenInvalidated(for type: PKPushType) {
        state.withLock { $0.tokens[type] = nil }
        let registry = UncheckedSendableBox(self)
        onQueue { registry.value.delegate?.pushRegistry(registry.value, didInvalidatePushTokenFor: type) }
    }

    /// Hands a push to the delegate on the queue; returns `true` once the delegate called its completion, `false` at once
    /// when there is no delegate, or when `budget` runs out first.
    func deliver(_ payload: [AnyHashable: Any], of type: PKPushType, within budget: Duration) async -> Bool {
        let registry = UncheckedSendableBox(self)
        let dictionary = UncheckedSendableBox(payload)
        return await awaitCallback(timeout: budget, orElse: false) { finish in
            onQueue {
                guard let delegate = registry.value.delegate else { return finish(false) }
                delegate.pushRegistry(
                    registry.value, didReceiveIncomingPushWith: PKPushPayload(type: type, dictionaryPayload: dictionary.value),
                    for: type
                ) { finish(true) }
            }
        }
    }
}
