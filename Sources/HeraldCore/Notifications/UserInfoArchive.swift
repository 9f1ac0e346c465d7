import Foundation

/// A notification's `userInfo` as the store keeps it: JSON text when the dictionary holds only what JSON holds (every
/// push's payload, and most apps' own), else a binary property list (a `Date` or `Data` in a local notification's
/// `userInfo`).
///
/// JSON keeps what a property list cannot: `null` (`NSNull`), integers up to `UInt64.max`, and booleans that stay
/// `NSNumber` booleans (a property list gives them back as Swift's `Bool`, for which `as? Int` is `nil`), so app code
/// reads a push's `userInfo` as it reads `JSONSerialization`'s dictionary on an iPhone (``JSONValue/foundationObject``).
/// Stores written before keep their property lists, which are still read.
public enum UserInfoArchive {
    /// Why a `userInfo` dictionary cannot be kept.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// The stored form of a push's payload: its JSON text; `nil` for anything but an object.
    ///
    /// - Parameter payload: The push's payload.
    public static func data(forPayload payload: JSONValue) -> Data? {
        guard case .object = payload else { return nil }
        return payload.jsonData
    }

    /// The stored form of `dictionary`; `nil` when it is empty.
    ///
    /// - Parameter dictionary: A `userInfo` dictionary: string keys, and property-list or JSON values.
    /// - Throws: ``Failure`` for a key that is not a string, or a value neither JSON nor a property list holds.
    public static func data(for dictionary: [AnyHashable: Any]) throws(Failure) -> Data? {
        if dictionary.isEmpty { return nil }
        var strings: [String: Any] = [:]
        strings.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            guard let key = key.base as? String else {
                throw Failure(description: "userInfo keys must be strings; found \(type(of: key.base))")
            }
            strings[key] = value
        }
        if let json = JSONValue(foundationObject: strings) { return json.jsonData }
        do {
            return try PropertyListSerialization.data(fromPropertyList: strings, format: .binary, options: 0)
        } catch {
            throw Failure(description: "userInfo must hold property-list or JSON values: \(error.localizedDescription)")
        }
    }

    /// The dictionary kept as `data`: empty for `nil`, or for data that is neither form.
    ///
    /// - Parameter data: What ``data(for:)`` or ``data(forPayload:)`` made, or a property list an older store kept.
    public static func dictionary(from data: Data?) -> [AnyHashable: Any] {
        guard let data, let first = data.first else { return [:] }
        if first == UInt8(ascii: "{") {
            return (try? JSONValue(parsing: data))?.foundationDictionary ?? [:]
        }
        guard BinaryPropertyList.isPlain(data),
            let object = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
            let dictionary = object as? [AnyHashable: Any]
        else { return [:] }
        return dictionary
    }
}
