import ArgumentParser
import HeraldNotificationEngine

/// `--device-model`: which delivery rules the device applies.
struct DeviceModelOptions: ParsableArguments {
    /// The rules' names on the command line.
    enum Name: String, ExpressibleByArgument, CaseIterable {
        case instant, iphone

        var kind: DeliveryModel.Kind {
            switch self {
            case .instant: .instant
            case .iphone: .iphone
            }
        }
    }

    @Option(
        help: """
            How the device delivers: instant (every push at once, as a mock of APNs — the default, what a provider's \
            test suite expects) or iphone (an iPhone's background budget, power restrictions and wakes, each state in \
            the delivery log; see docs/device-model.md).
            """)
    var deviceModel: Name = .instant

    /// The rules chosen.
    var kind: DeliveryModel.Kind { deviceModel.kind }
}
