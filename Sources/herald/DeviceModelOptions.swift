import ArgumentParser
import HeraldDeviceProtocol
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

    @Option(
        help: """
            With --device-model iphone: make the choices Apple leaves to the device (each app's background budget each \
            hour, two or three; when the burst comes after power restrictions lift) from this seed, the same every run \
            with the same seed. Without it each is settled one way (three; at once).
            """)
    var seed: UInt64?

    func validate() throws {
        if seed != nil, deviceModel != .iphone {
            throw ValidationError("--seed makes the iPhone rules' choices: add --device-model iphone, or leave --seed out.")
        }
    }

    /// The rules chosen.
    var kind: DeliveryModel.Kind { deviceModel.kind }
}
