import Foundation

/// An app's `Localizable.strings`: what `*-loc-key` in a push and `localizedUserNotificationString` look keys up in.
///
/// Files are found as on Apple's platforms: `<bundle>/<language>.lproj/Localizable.strings` for each preferred
/// language in turn (and its base language, `pt` for `pt-BR`), then `Base.lproj`, `en.lproj` and the bundle's top
/// level. A key missing from every table is its own text (Apple's fallback).
public struct LocalizedStringTable: Sendable, Hashable {
    /// Keys and their texts, from the first table that has each key.
    public var strings: [String: String]

    /// A table with these strings.
    public init(strings: [String: String] = [:]) {
        self.strings = strings
    }

    /// The text for `key`, or the key itself when no table has it.
    public func text(forKey key: String) -> String {
        strings[key] ?? key
    }

    /// The text for `key` with `arguments` filled in (``NotificationTextFormat``).
    public func text(forKey key: String, arguments: [String]) -> String {
        NotificationTextFormat.format(text(forKey: key), arguments: arguments)
    }

    /// Loads the tables of the bundle at `bundlePath` for `languages` (most preferred first).
    ///
    /// Unreadable or malformed files are skipped: a bad strings file never stops a notification.
    /// - Parameters:
    ///   - bundlePath: The app bundle's directory (an executable's directory for a SwiftPM app).
    ///   - languages: Preferred language codes, e.g. `["de-CH", "en"]`.
    ///   - tableName: The table, `Localizable` unless given.
    public static func load(bundlePath: String, languages: [String], tableName: String = "Localizable") -> LocalizedStringTable {
        var directories: [String] = []
        for language in languages {
            directories.append("\(language).lproj")
            if let base = language.split(separator: "-").first.map(String.init), base != language {
                directories.append("\(base).lproj")
            }
        }
        directories += ["Base.lproj", "en.lproj", ""]
        var merged: [String: String] = [:]
        var seen = Set<String>()
        for directory in directories where seen.insert(directory).inserted {
            let path =
                directory.isEmpty
                ? "\(bundlePath)/\(tableName).strings" : "\(bundlePath)/\(directory)/\(tableName).strings"
            guard let table = read(path: path) else { continue }
            merged.merge(table) { earlier, _ in earlier }
        }
        return LocalizedStringTable(strings: merged)
    }

    /// Reads one `.strings` file (the old-style property-list format, UTF-8 or UTF-16), or `nil`.
    public static func read(path: String) -> [String: String]? {
        FileManager.default.contents(atPath: path).flatMap(parse)
    }

    /// Reads the contents of a `.strings` file (the old-style property-list format, UTF-8 or UTF-16): its string
    /// entries, or `nil` when it is not such a file.
    public static func parse(_ data: Data) -> [String: String]? {
        guard BinaryPropertyList.isPlain(data),  // Xcode compiles .strings to binary lists
            let object = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
            let dictionary = object as? [String: Any]
        else { return nil }
        return dictionary.compactMapValues { $0 as? String }
    }

    /// The process's preferred languages, from `LANGUAGE` / `LC_ALL` / `LC_MESSAGES` / `LANG` (`de_CH.UTF-8` → `de-CH`).
    public static func preferredLanguages(environment: [String: String]) -> [String] {
        var languages: [String] = []
        if let list = environment["LANGUAGE"], !list.isEmpty {
            languages += list.split(separator: ":").map(String.init)
        }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[name], !value.isEmpty {
                languages.append(value)
                break
            }
        }
        return languages.compactMap { raw in
            let code = raw.split(separator: ".").first.map(String.init) ?? raw
            guard code != "C", code != "POSIX", !code.isEmpty else { return nil }
            return code.replacingOccurrences(of: "_", with: "-")
        }
    }
}
