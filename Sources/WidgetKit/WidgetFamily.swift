import Foundation

/// A widget's size and shape: Apple's `WidgetFamily`.
public enum WidgetFamily: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    case systemSmall
    case systemMedium
    case systemLarge
    case systemExtraLarge
    case accessoryCorner
    case accessoryCircular
    case accessoryRectangular
    case accessoryInline

    public var description: String { rawValue }

    /// Its size in points on an iPhone 15 (Apple's design resources), what `TimelineProviderContext.displaySize` says.
    var displaySize: CGSize {
        switch self {
        case .systemSmall: CGSize(width: 158, height: 158)
        case .systemMedium: CGSize(width: 338, height: 158)
        case .systemLarge: CGSize(width: 338, height: 354)
        case .systemExtraLarge: CGSize(width: 715, height: 354)
        case .accessoryCorner: CGSize(width: 40, height: 40)
        case .accessoryCircular: CGSize(width: 72, height: 72)
        case .accessoryRectangular: CGSize(width: 172, height: 76)
        case .accessoryInline: CGSize(width: 257, height: 26)
        }
    }
}
