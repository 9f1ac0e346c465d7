/// FCM's topic names: `[a-zA-Z0-9-_.~%]+`, sent as `weather` or `/topics/weather`.
public enum FCMTopic {
    /// Whether `name` (without `/topics/`) is a topic name FCM accepts.
    ///
    /// - Parameter name: The name.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 900
            && name.unicodeScalars.allSatisfy { scalar in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "-_.~%".unicodeScalars.contains(scalar)
            }
    }

    /// The topic a message's `topic` names, its `/topics/` prefix removed; `nil` when it is not a valid name.
    ///
    /// - Parameter field: The message's `topic`.
    public static func name(fromField field: String) -> String? {
        let name = field.hasPrefix("/topics/") ? String(field.dropFirst("/topics/".count)) : field
        return isValidName(name) ? name : nil
    }
}
