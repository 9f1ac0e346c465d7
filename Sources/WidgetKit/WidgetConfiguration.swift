import Foundation
import HeraldCore

/// A widget's configuration: Apple's `WidgetConfiguration` (SwiftUI's, on iOS), made with ``StaticConfiguration`` and
/// its modifiers.
public protocol WidgetConfiguration {
    /// The kinds it declares (WidgetKit's own: not for apps).
    var _declarations: [WidgetDeclaration] { get }
}

/// A configuration changed by a modifier.
public struct ModifiedWidgetConfiguration: WidgetConfiguration {
    public let _declarations: [WidgetDeclaration]
}

extension WidgetConfiguration {
    /// The families the widget supports (the first is the one Herald's device places it in).
    public func supportedFamilies(_ families: [WidgetFamily]) -> some WidgetConfiguration {
        modified { $0.families = families.isEmpty ? $0.families : families }
    }

    /// The name the widget gallery shows.
    public func configurationDisplayName(_ displayName: String) -> some WidgetConfiguration {
        modified { $0.displayName = displayName }
    }

    /// The description the widget gallery shows.
    public func description(_ description: String) -> some WidgetConfiguration {
        modified { $0.summary = description }
    }

    /// Opts the widget into `widgets` pushes (iOS 26): `pushHandlerType` hears of the push token.
    ///
    /// - Parameter pushHandlerType: Made with `init()` and told each time the token changes.
    public func pushHandler(_ pushHandlerType: any WidgetPushHandler.Type) -> some WidgetConfiguration {
        modified { $0.widgetPushHandler = UncheckedSendableBox(pushHandlerType) }
    }

    private func modified(_ change: (inout WidgetDeclaration) -> Void) -> ModifiedWidgetConfiguration {
        ModifiedWidgetConfiguration(_declarations: _declarations.modified(change))
    }
}
