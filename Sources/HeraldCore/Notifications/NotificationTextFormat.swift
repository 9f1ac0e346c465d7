import Foundation

/// Fills a notification's format string (`"%@ sent you %@"`, `"%2$@ and %1$@"`) with arguments, as Apple does
/// for `loc-args` and `localizedUserNotificationString(forKey:arguments:)`.
///
/// The format comes from a push or a strings file, so it is untrusted: nothing here reads past the arguments or
/// crashes on a malformed format. `%@`, `%d`, `%i`, `%u`, `%s`, `%f` and friends (with `n$` positions, flags,
/// width and precision) take the next argument as text; a specifier with no argument left becomes empty text (Apple
/// would read past its arguments); `%%` is a percent sign; anything else is copied as it is.
public enum NotificationTextFormat {
    /// `format` with its specifiers replaced by `arguments`, in order or by position.
    public static func format(_ format: String, arguments: [String]) -> String {
        guard format.contains("%") else { return format }
        let scalars = Array(format.unicodeScalars)
        var result = String.UnicodeScalarView()
        var next = 0
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "%" else {
                result.append(scalar)
                index += 1
                continue
            }
            guard let spec = Specifier.parse(scalars, at: index + 1) else {
                result.append(scalar)
                index += 1
                continue
            }
            index = spec.end
            if spec.conversion == "%" {
                result.append("%")
                continue
            }
            let position: Int
            if let explicit = spec.position {
                position = explicit - 1
            } else {
                position = next
                next += 1
            }
            if position >= 0, position < arguments.count {
                result.append(contentsOf: arguments[position].unicodeScalars)
            }
        }
        return String(result)
    }

    private struct Specifier {
        var position: Int?
        var conversion: Unicode.Scalar
        var end: Int

        static let conversions: Set<Unicode.Scalar> = [
            "@", "d", "i", "u", "s", "S", "f", "F", "e", "E", "g", "G", "x", "X", "o", "c", "C", "a", "A", "%",
        ]
        static let lengthModifiers: Set<Unicode.Scalar> = ["l", "h", "q", "z", "t", "j", "L"]
        static let flags: Set<Unicode.Scalar> = ["-", "+", " ", "#", "0", "'"]

        /// Reads `[n$][flags][width][.precision][length]conversion` starting after a `%`.
        static func parse(_ scalars: [Unicode.Scalar], at start: Int) -> Specifier? {
            var index = start
            func digits() -> Int? {
                var value = 0
                var any = false
                while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                    value = min(value * 10 + Int(scalars[index].value - 48), 1_000_000)
                    any = true
                    index += 1
                }
                return any ? value : nil
            }
            var position: Int?
            let save = index
            if let number = digits(), index < scalars.count, scalars[index] == "$" {
                position = number
                index += 1
            } else {
                index = save
            }
            while index < scalars.count, flags.contains(scalars[index]) { index += 1 }
            _ = digits()
            if index < scalars.count, scalars[index] == "." {
                index += 1
                _ = digits()
            }
            while index < scalars.count, lengthModifiers.contains(scalars[index]) { index += 1 }
            guard index < scalars.count, conversions.contains(scalars[index]) else { return nil }
            return Specifier(position: position, conversion: scalars[index], end: index + 1)
        }
    }
}
