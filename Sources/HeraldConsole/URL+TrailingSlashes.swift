import Foundation

extension URL {
    /// The URL's text without trailing slashes: a service's root, to which a path starting with `/` is appended.
    var textWithoutTrailingSlashes: String {
        var text = absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
