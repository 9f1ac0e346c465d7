import Foundation
import HeraldCore
import HeraldFaults

/// What the gateway does with a push it accepted: the one decision both dispatch paths run — the task's
/// (``PushDispatcher/dispatch(_:fault:)``) and the event loop's (``PushDispatcher/dispatch(_:_:on:)``) — made from what is
/// known at that moment, with no I/O.
///
/// A rule about where a push goes (a retry, a connected device, store-and-forward, expiration, several nodes) is
/// written here once; the paths only carry it out.
enum DispatchDecision: Equatable, Sendable {
    /// A fault rule (the test-bed's faults) refuses the push: answered as the rule says, neither kept nor delivered.
    case refuse(FaultRefusal)
    /// A provider's retry of a push accepted lately (the same `apns-id` and payload for the same device): answered as
    /// accepted and not delivered again. The associated value is the unique ID of the push it repeats.
    case discardDuplicate(of: String)
    /// The device is connected to this node: the push is written to it. If the device does not acknowledge it in
    /// time, ``Offline`` decides what comes next, as for a device not connected here.
    case deliver
    /// The device is not connected to this node.
    case offline(Offline)

    /// What becomes of a push whose device is not connected to this node (or did not acknowledge it).
    enum Offline: Equatable, Sendable {
        /// Kept until the date, for the device to fetch when it connects (store-and-forward, APNs §5); on several
        /// nodes relayed instead to the node the device is connected to, if it is.
        case keep(until: Date)
        /// Expiration 0 on several nodes: one attempt through the node the device is connected to, if it is, within
        /// an acknowledgement timeout (the date); discarded otherwise.
        case relayOnce(until: Date)
        /// Not kept — expiration 0 with no other node to try, or an expiration that has passed (D-05) — so
        /// discarded.
        case discardExpired

        /// What becomes of a push with `expiration` at `now`.
        ///
        /// - Parameters:
        ///   - expiration: The push's `apns-expiration`.
        ///   - now: The gateway clock's time.
        ///   - rules: The gateway's storage lifetime, acknowledgement timeout, and whether nodes share its store.
        init(expiration: APNsRequestHeaders.Expiration, now: Date, rules: Rules) {
            let longest = now.addingTimeInterval(rules.storageLifetime.timeInterval)
            switch expiration {
            case .storagePolicy:
                self = .keep(until: longest)
            case .at(let date) where date > now:
                self = .keep(until: min(date, longest))
            case .at:
                self = .discardExpired
            case .immediately:
                self =
                    rules.severalNodes
                    ? .relayOnce(until: now.addingTimeInterval(rules.acknowledgementTimeout.timeInterval))
                    : .discardExpired
            }
        }
    }

    /// The gateway's settings a decision depends on.
    struct Rules: Sendable {
        /// How long a push for an offline device is kept at most.
        var storageLifetime: Duration
        /// How long a connected device has to acknowledge a push.
        var acknowledgementTimeout: Duration
        /// Whether several nodes share the store (a device may be connected to another one).
        var severalNodes: Bool
    }

    /// The decision for a push.
    ///
    /// - Parameters:
    ///   - fault: What the fault rules do to this push, if one hit it: a refusal decides; a delay, a reset other than
    ///     `REFUSED_STREAM` or a close does not (the push is handled as usual, and its answer is late or lost).
    ///   - repeating: The unique ID of the push accepted lately that this one repeats, if it is a provider's retry.
    ///   - connectedHere: Whether its device is connected to this node.
    ///   - expiration: Its `apns-expiration`.
    ///   - now: The gateway clock's time.
    ///   - rules: The gateway's settings.
    init(
        fault: FaultHit? = nil, repeating: String?, connectedHere: Bool, expiration: APNsRequestHeaders.Expiration,
        now: Date, rules: Rules
    ) {
        if let fault, fault.action.refuses {
            self = .refuse(FaultRefusal(hit: fault))
        } else if let repeating {
            self = .discardDuplicate(of: repeating)
        } else if connectedHere {
            self = .deliver
        } else {
            self = .offline(Offline(expiration: expiration, now: now, rules: rules))
        }
    }
}
