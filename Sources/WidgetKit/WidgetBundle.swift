import Foundation
import Logging

/// The widgets and controls of a widget extension: Apple's `WidgetBundle`, the extension's `@main` type.
///
/// ```swift
/// @main
/// struct ScoreWidgets: WidgetBundle {
///     var body: some Widget {
///         ScoreWidget()
///         ScoreControl()
///     }
/// }
/// ```
///
/// On Herald's device the extension is a process of the app (it names its app as every app process does:
/// `HERALD_BUNDLE_ID`, else its bundle): ``main()`` declares the bundle's kinds to the device daemon, which places
/// each widget (its provider's timeline is asked for at once), issues the push tokens of those with a push handler,
/// and asks for reloads from then on. It runs until it is ended.
public protocol WidgetBundle {
    associatedtype Body: Widget
    init()
    /// The bundle's widgets and controls.
    @WidgetBundleBuilder var body: Body { get }
}

extension WidgetBundle {
    /// Runs the widget extension: declares the bundle's widgets and controls, then serves the device's reloads until
    /// the process ends.
    public static func main() async {
        WidgetHost.shared.declare(Self().body.body._declarations)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3_600))
        }
    }
}

/// Builds a bundle's body from its widgets and controls: Apple's `WidgetBundleBuilder`.
@resultBuilder
public enum WidgetBundleBuilder {
    public static func buildExpression<W: Widget>(_ widget: W) -> [WidgetDeclaration] {
        widget.body._declarations
    }

    public static func buildExpression<C: ControlWidget>(_ control: C) -> [WidgetDeclaration] {
        control.body._declarations
    }

    public static func buildBlock(_ parts: [WidgetDeclaration]...) -> WidgetBundleContent {
        WidgetBundleContent(declarations: parts.flatMap { $0 })
    }
}

/// The widgets and controls a ``WidgetBundleBuilder`` gathered.
public struct WidgetBundleContent: Widget {
    let declarations: [WidgetDeclaration]

    init(declarations: [WidgetDeclaration]) {
        self.declarations = declarations
    }

    /// An empty bundle.
    public init() {
        self.declarations = []
    }

    public var body: ModifiedWidgetConfiguration {
        ModifiedWidgetConfiguration(_declarations: declarations)
    }
}
