import Foundation

/// What a `PKPushRegistry` tells the app: its tokens and its pushes, on the registry's queue.
///
/// Apple's optional methods have default implementations here (Swift on Linux has no optional protocol requirements).
public protocol PKPushRegistryDelegate: NSObjectProtocol {
    /// The app's token for `type`: send it to your provider.
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType)
    /// A push came: handle it (a VoIP call: report it to CallKit) and call `completion` when done.
    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping () -> Void)
    /// The token for `type` is no longer valid (the app stopped asking for its pushes).
    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType)
    /// A push came (iOS 8–10's form, without a completion).
    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType)
}

extension PKPushRegistryDelegate {
    /// Calls the form without a completion, then the completion.
    public func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping () -> Void
    ) {
        pushRegistry(registry, didReceiveIncomingPushWith: payload, for: type)
        completion()
    }

    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {}

    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType)
    {}
}
