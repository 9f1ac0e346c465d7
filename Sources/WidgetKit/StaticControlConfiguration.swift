import Foundation
import HeraldCore
import HeraldDeviceProtocol

/// A control with no configuration the person chooses: Apple's `StaticControlConfiguration` (iOS 18).
///
/// Herald has no SwiftUI: the content closure's result is the control as text (`String(describing:)`), made again at
/// each reload (a `controls` push, `ControlCenter.reloadControls(ofKind:)`).
public struct StaticControlConfiguration: ControlWidgetConfiguration {
    public let _declarations: [WidgetDeclaration]

    /// A control of `kind` that shows what `content` gives.
    ///
    /// - Parameters:
    ///   - kind: The control's kind.
    ///   - content: The control (its text), made at each reload.
    public init<Content>(kind: String, content: @escaping () -> Content) {
        let content = UncheckedSendableBox(content)
        _declarations = [
            WidgetDeclaration(
                kind: kind, isControl: true, families: [],
                makeTimeline: { _ in
                    ([WidgetTimelineRecord.Entry(date: Date(), text: String(describing: content.value()))], .never)
                })
        ]
    }
}
