/// What Firebase Cloud Messaging tells the app: its registration token, when it is issued or changes.
public protocol MessagingDelegate: AnyObject {
    /// The app's registration token, issued or changed (`nil`: deleted). Called on the main queue.
    ///
    /// - Parameters:
    ///   - messaging: The messaging instance.
    ///   - fcmToken: The registration token.
    func messaging(_ messaging: Messaging, didReceiveRegistrationToken fcmToken: String?)
}

extension MessagingDelegate {
    /// Optional, as in Firebase's Objective-C protocol.
    public func messaging(_ messaging: Messaging, didReceiveRegistrationToken fcmToken: String?) {}
}
