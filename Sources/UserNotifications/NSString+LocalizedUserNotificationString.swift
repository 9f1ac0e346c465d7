import Foundation
import HeraldCore
import HeraldNotificationEngine

extension NSString {
    /// Apple's deferred localization for notification text (UserNotifications §1.3).
    ///
    /// The key is looked up in the app's `Localizable.strings` — the main bundle's `<language>.lproj` folders for
    /// the process's languages (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`), then `Base.lproj`, `en.lproj` and the
    /// bundle's top level, the same lookup a push's `*-loc-key` uses — and a key found nowhere is its own format.
    /// Arguments fill `%@`, `%d`, `%n$@` and the like as text (`"\(argument)"`), so a format can never read past
    /// them.
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        let table = MainBundleStrings.table
        let text = (arguments ?? []).map { argument -> String in
            switch argument {
            case let value as String: value
            case let value as NSNumber: value.stringValue
            default: "\(argument)"
            }
        }
        return text.isEmpty ? table.text(forKey: key) : table.text(forKey: key, arguments: text)
    }
}

/// The main bundle's strings, read once per process.
enum MainBundleStrings {
    static let table = LocalizedStringTable.load(
        bundlePath: Bundle.main.bundlePath,
        languages: LocalizedStringTable.preferredLanguages(environment: ProcessInfo.processInfo.environment))
}
