import Foundation

/// The token a provider sends the app's PushKit pushes to.
open class PKPushCredentials: NSObject {
    /// The kind of pushes the token is for.
    open private(set) var type: PKPushType
    /// The token: a provider sends it, as hex, in the path `/3/device/<token>`.
    open private(set) var token: Data

    init(type: PKPushType, token: Data) {
        self.type = type
        self.token = token
    }
}
