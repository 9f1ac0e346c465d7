import Foundation

/// A PushKit push as the app's delegate gets it.
open class PKPushPayload: NSObject {
    /// The kind of push.
    open private(set) var type: PKPushType
    /// The push's JSON payload as a dictionary.
    open private(set) var dictionaryPayload: [AnyHashable: Any]

    init(type: PKPushType, dictionaryPayload: [AnyHashable: Any]) {
        self.type = type
        self.dictionaryPayload = dictionaryPayload
    }
}
