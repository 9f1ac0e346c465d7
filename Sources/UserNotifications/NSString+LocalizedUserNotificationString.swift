import Foundation

extension NSString {
    /// Apple's deferred localization for notification text.
    ///
    /// Herald has no app bundle string tables on Linux, so the key is the format string: with arguments, they are
    /// substituted as by `String(format:)`; without, the key is returned.
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        guard let arguments, !arguments.isEmpty else { return key }
        let cVarArgs: [any CVarArg] = arguments.map { argument in
            switch argument {
            case let value as Int: value
            case let value as Double: value
            case let value as NSNumber: value.doubleValue.rounded() == value.doubleValue ? value.intValue : value.doubleValue
            default: "\(argument)"
            }
        }
        return String(format: key, arguments: cVarArgs)
    }
}
