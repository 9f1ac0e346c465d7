import Foundation
import HeraldCore

/// A control's configuration: Apple's `ControlWidgetConfiguration` (iOS 18), made with
/// ``StaticControlConfiguration`` and its modifiers.
public protocol ControlWidgetConfiguration {
    /// The kinds it declares (WidgetKit's own: not for apps).
    var _declarations: [WidgetDeclaration] { get }
}

/// A control configuration changed by a modifier.
public struct ModifiedControlWidgetConfiguration: ControlWidgetConfiguration {
    public let _declarations: [WidgetDeclaration]
}

extension ControlWidgetConfiguration {
    /// The name the controls gallery shows.
    public func displayName(_ displayName: String) -> some ControlWidgetConfiguration {
        modified { $0.displayName = displayName }
    }

    /// The description the controls gallery shows.
    public func description(_ description: String) -> some ControlWidgetConfiguration {
        modified { $0.summary = description }
    }

    /// Opts the control into `controls` pushes: `pushHandlerType` hears of its push token.
    ///
    /// - Parameter pushHandlerType: Made with `init()` and told each time a control's token changes.
    public func pushHandler(_ pushHandlerType: any ControlPushHandler.Type) -> some ControlWidgetConfiguration {
        modified { $0.controlPushHandler = UncheckedSendableBox(pushHandlerType) }
    }

    private func modified(_ change: (inout WidgetDeclaration) -> Void) -> ModifiedControlWidgetConfiguration {
        ModifiedControlWidgetConfiguration(_declarations: _declarations.modified(change))
    }
}
