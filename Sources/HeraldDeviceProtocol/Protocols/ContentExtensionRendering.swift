import Foundation

/// What a notification content extension shows for a notification (Herald draws no views; see `UIViewController`).
public struct ContentExtensionRendering: Codable, Sendable, Hashable {
    /// The controller's title.
    public var title: String?
    /// The texts of its labels, in order.
    public var texts: [String]
    /// Its image's file.
    public var imagePath: String?

    public init(title: String?, texts: [String], imagePath: String?) {
        self.title = title
        self.texts = texts
        self.imagePath = imagePath
    }
}
