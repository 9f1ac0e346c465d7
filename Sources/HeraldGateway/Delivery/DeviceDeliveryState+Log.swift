import Foundation
import HeraldCore

extension GatewayMetrics.Category {
    /// The metric category of a device's state (the same name).
    init(_ state: DeviceDeliveryState) {
        switch state {
        case .storedPowerConsiderations: self = .storedPowerConsiderations
        case .storedBackgroundBudget: self = .storedBackgroundBudget
        case .storedWidgetBudget: self = .storedWidgetBudget
        case .storedUntilWake: self = .storedUntilWake
        case .deliveredFromStorage: self = .deliveredFromStorage
        case .discardedDisabled: self = .discardedDisabled
        case .discardedDisabledFromStorage: self = .discardedDisabledFromStorage
        case .discardedExpired: self = .discardedExpired
        case .discardedSuperseded: self = .discardedSuperseded
        case .discardedForceQuit: self = .discardedForceQuit
        case .discardedNotAPayload: self = .discardedNotAPayload
        case .discardedNothingToShow: self = .discardedNothingToShow
        case .discardedNotAnActivityUpdate: self = .discardedNotAnActivityUpdate
        case .discardedNoActivity: self = .discardedNoActivity
        case .discardedOutOfOrder: self = .discardedOutOfOrder
        case .discardedNotAReload: self = .discardedNotAReload
        }
    }
}

extension DeliveryEvent {
    /// The delivery-log event of a device's state: its name, then what rule put the push there and what releases it.
    ///
    /// - Parameters:
    ///   - uniqueID: The push's `apns-unique-id` (its delivery ID).
    ///   - at: When the gateway heard of it.
    ///   - state: What the device did with the push.
    init(uniqueID: String, at: Date, deviceState state: DeviceDeliveryState) {
        let kind: Kind =
            switch state.outcome {
            case .stored: .stored
            case .delivered: .delivered
            case .discarded: .discarded
            }
        self.init(uniqueID: uniqueID, at: at, kind: kind, detail: "\(state.rawValue): \(state.explanation)")
    }
}
