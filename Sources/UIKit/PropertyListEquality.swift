import Foundation

/// Whether two dictionaries hold the same property list. Both go through the property-list serializer first:
/// Foundation on Linux compares a bridged Swift `Int` and an `NSNumber` unequal one way round and equal the other.
func propertyListsEqual(_ a: [AnyHashable: Any]?, _ b: [AnyHashable: Any]?) -> Bool {
    func normalized(_ dictionary: [AnyHashable: Any]?) -> NSDictionary? {
        guard let dictionary, !dictionary.isEmpty else { return NSDictionary() }
        guard let data = try? PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0),
            let decoded = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [AnyHashable: Any]
        else { return nil }
        return NSDictionary(dictionary: decoded)
    }
    guard let left = normalized(a), let right = normalized(b) else {
        return NSDictionary(dictionary: a ?? [:]).isEqual(to: b ?? [:])
    }
    return left.isEqual(right)
}
