import Foundation
import HeraldCore
import HeraldDeviceProtocol

/// One widget or control kind as a configuration declares it: what WidgetKit registers with the device and how it
/// makes the kind's timeline. Made by ``StaticConfiguration`` and ``StaticControlConfiguration``, changed by their
/// modifiers; an app never makes one itself.
public struct WidgetDeclaration: Sendable {
    /// Makes the kind's timeline for a context: its entries (as text) and its reload policy; `nil` when the provider
    /// did not call its completion in time.
    typealias TimelineMaker =
        @Sendable (TimelineProviderContext) async -> (entries: [WidgetTimelineRecord.Entry], policy: TimelineReloadPolicy)?

    let kind: String
    let isControl: Bool
    var families: [WidgetFamily]
    var displayName: String?
    var summary: String?
    var widgetPushHandler: UncheckedSendableBox<any WidgetPushHandler.Type>?
    var controlPushHandler: UncheckedSendableBox<any ControlPushHandler.Type>?
    let makeTimeline: TimelineMaker

    /// How long a provider has to call `getTimeline`'s completion.
    static let providerBudget: Duration = .seconds(30)

    /// The family the widget is placed in on the device: its first supported one.
    var placedFamily: WidgetFamily { families.first ?? .systemSmall }

    /// The record the device keeps.
    var record: WidgetKindRecord {
        WidgetKindRecord(
            kind: kind, isControl: isControl, families: isControl ? [] : families.map(\.rawValue),
            takesPushes: isControl ? controlPushHandler != nil : widgetPushHandler != nil)
    }
}

extension [WidgetDeclaration] {
    /// The declarations, each changed by a configuration's modifier.
    func modified(_ change: (inout WidgetDeclaration) -> Void) -> [WidgetDeclaration] {
        map { declaration in
            var declaration = declaration
            change(&declaration)
            return declaration
        }
    }
}
