import Foundation
import HeraldCore

/// When a push that reached the device reaches its app: Apple's device-side rules as a value, driven by the instants
/// it is given (the engine's clock), never by the wall.
///
/// ``Kind/instant`` hands every push over at once, as a mock of APNs does. ``Kind/iphone`` applies what Apple says an
/// iPhone does:
/// - a background push (Y-10): at most `Rules.backgroundPushesPerHour` per app in any hour; beyond them the push is
///   held, only the newest held one is kept (the older one is discarded), and it is handed over when the hour frees a
///   slot or the app is launched, or discarded when the app is force-quit;
/// - priority 5 and 1 (D-06, D-07): held while the device has power restrictions ("Stored - Power Considerations")
///   and handed over in one burst when they lift; priority 1 never wakes the device — it waits for the next wake (a
///   priority-10 push, an app launched, the person looking);
/// - a `widgets` push (P-11: "budgeted"): at most `Rules.widgetPushesPerDay` per app in any 24 hours; beyond them
///   held as a background push is (only the newest kept), handed over when the day frees a slot;
/// - a Live Activity update at priority 10 (Y-13) spends the activity's hourly budget
///   (`Rules.liveActivityUpdatesPerHour`, `Rules.frequentLiveActivityUpdatesPerHour` for an app with
///   `NSSupportsLiveActivitiesFrequentUpdates`); beyond it the update goes as priority 5 would;
/// - an alert for an app whose notifications are off is discarded ("Discarded - Disabled", D-08); a held push whose
///   `apns-expiration` passes is discarded ("Discarded - Expired", D-03).
///
/// Each call returns what happened to each push it touched, in order; ``nextDeadline`` says when ``advance(to:)``
/// has something to do. Without a seed nothing here is random: what Apple leaves to the device is settled one way,
/// documented on each rule. With ``Rules/seed`` the device makes those choices as an iPhone may — each app's
/// background budget each hour drawn from "two or three", the burst after power restrictions lift coming after a drawn
/// delay — from that seed alone, so the same seed, pushes and instants give the same decisions.
public struct DeliveryModel: Sendable {
    /// Which rules apply.
    public enum Kind: String, Sendable, CaseIterable {
        /// Every push handed over at once (today's mocks of APNs).
        case instant
        /// An iPhone's rules (budgets, power, wakes).
        case iphone
    }

    /// The numbers the rules use.
    public struct Rules: Sendable, Equatable {
        /// Background pushes handed to one app in any hour. Apple: "don't send more than two or three per hour"
        /// (Y-10); Herald takes the upper figure, so a fourth within the hour is the first one held.
        var backgroundPushesPerHour = 3
        /// Priority-10 updates of one Live Activity in any hour. GAP: Apple names a budget but no figure (Y-13);
        /// Herald allows one every five minutes.
        var liveActivityUpdatesPerHour = 12
        /// The same for an app with `NSSupportsLiveActivitiesFrequentUpdates` (Y-13: "raises the budget"): one a
        /// minute.
        var frequentLiveActivityUpdatesPerHour = 60
        /// `widgets` pushes handed to one app in any 24 hours. GAP: Apple says widget pushes are budgeted (P-11) but
        /// gives no figure; Herald takes the daily budget Apple names for a widget's reloads ("from 40 to 70
        /// refreshes", *Keeping a widget up to date*), its upper figure. `controls` pushes have no budget: Apple
        /// names none.
        var widgetPushesPerDay = 70
        /// Makes the choices Apple leaves to the device (`herald up --device-model iphone --seed N`); `nil`: each is
        /// settled one way (three background pushes an hour; the burst at once).
        public var seed: UInt64?
        /// With a seed, the longest wait between power restrictions lifting and the burst of what they held (D-06:
        /// "grouped and delivered in bursts"): the wait is drawn from 0 to this many seconds.
        var longestBurstDelay: TimeInterval = 60

        public init() {}
    }

    /// A push as the rules see it.
    public struct Push: Sendable, Hashable {
        /// The delivery's ID on the device channel.
        public var id: String
        /// The app.
        public var bundleID: String
        /// `apns-push-type`.
        public var pushType: APNsPushType
        /// `apns-priority`.
        public var priority: APNsPriority
        /// The Live Activity an update is for (`nil` for other pushes).
        public var activityID: String?
        /// When it expires (`apns-expiration`); `nil`: never while the device holds it.
        public var expiresAt: Date?

        public init(
            id: String, bundleID: String, pushType: APNsPushType, priority: APNsPriority, activityID: String? = nil,
            expiresAt: Date? = nil
        ) {
            self.id = id
            self.bundleID = bundleID
            self.pushType = pushType
            self.priority = priority
            self.activityID = activityID
            self.expiresAt = expiresAt
        }
    }

    /// Why a push is held.
    public enum Hold: String, Sendable, Hashable {
        /// The state the device reports for a push held for this reason.
        public var state: DeviceDeliveryState {
            switch self {
            case .powerConsiderations: .storedPowerConsiderations
            case .untilWake: .storedUntilWake
            case .backgroundBudget: .storedBackgroundBudget
            case .widgetBudget: .storedWidgetBudget
            }
        }

        /// The device has power restrictions (priority 5 and 1): Apple's "Stored - Power Considerations".
        case powerConsiderations
        /// Priority 1 waits for the device to wake.
        case untilWake
        /// The app's background budget is spent (Y-10).
        case backgroundBudget
        /// The app's widget budget is spent (P-11).
        case widgetBudget
    }

    /// Why a push is discarded.
    public enum Discard: String, Sendable, Hashable {
        /// The app's notifications are off: Apple's "Discarded - Disabled".
        case disabled
        /// Its `apns-expiration` passed while it was held: Apple's "Discarded - Expired".
        case expired
        /// A newer background (or widgets) push for the same app is held instead (Y-10: only the newest is kept).
        case superseded
        /// The app was force-quit while its background push was held (Y-10).
        case forceQuit
    }

    /// What happened to one push.
    public enum Decision: Sendable, Hashable {
        /// Handed to the app; `fromStorage` when it had been held.
        case delivered(Push, fromStorage: Bool)
        /// Held, for this reason.
        case held(Push, Hold)
        /// Discarded, for this reason; `fromStorage` when it had been held.
        case discarded(Push, Discard, fromStorage: Bool)

        /// The push decided on.
        public var push: Push {
            switch self {
            case .delivered(let push, _), .held(let push, _), .discarded(let push, _, _): push
            }
        }

        /// The state the device reports for it (C-07's names where Apple has one): `nil` for a push handed to its
        /// app at once, which the acknowledgement alone says.
        public var state: DeviceDeliveryState? {
            switch self {
            case .delivered(_, let fromStorage): fromStorage ? .deliveredFromStorage : nil
            case .held(_, let hold): hold.state
            case .discarded(_, .disabled, let fromStorage): fromStorage ? .discardedDisabledFromStorage : .discardedDisabled
            case .discarded(_, .expired, _): .discardedExpired
            case .discarded(_, .superseded, _): .discardedSuperseded
            case .discarded(_, .forceQuit, _): .discardedForceQuit
            }
        }
    }

    /// The rules in force.
    public let kind: Kind
    /// Their numbers.
    public let rules: Rules

    /// Whether the device has power restrictions now.
    public private(set) var isPowerRestricted = false
    /// Apps whose notifications are off (their alerts are discarded).
    private(set) var disabledApps: Set<String> = []
    /// Apps with `NSSupportsLiveActivitiesFrequentUpdates`.
    private(set) var frequentUpdateApps: Set<String> = []

    /// Pushes held for power or a wake, in arrival order.
    private var waiting: [(push: Push, hold: Hold)] = []
    /// When the pushes power restrictions held come, after they lifted (only with a seed: at once otherwise).
    private var burstAt: Date?
    /// Bursts drawn so far: each draws its own delay.
    private var bursts: UInt64 = 0
    /// Each app's held background and widgets push (the newest of each only).
    private var heldBackground: [Budgeted: Push] = [:]
    /// When each app's last background and widgets pushes were handed over (within their window), oldest first.
    private var backgroundHandedOver: [Budgeted: [Date]] = [:]
    /// When each activity's last priority-10 updates were handed over (within the last hour), oldest first.
    private var liveActivityUpdates: [String: [Date]] = [:]

    /// A model with these rules.
    ///
    /// - Parameters:
    ///   - kind: Which rules apply.
    ///   - rules: Their numbers.
    public init(kind: Kind, rules: Rules = Rules()) {
        self.kind = kind
        self.rules = rules
    }

    /// The pushes held now, in the order they would be handed over.
    public var held: [Push] {
        waiting.map(\.push) + heldBackground.values.sorted { $0.id < $1.id }
    }

    /// An app's budget of one push type: background (Y-10) or widgets (P-11).
    private struct Budgeted: Hashable, Comparable {
        var bundleID: String
        var pushType: APNsPushType

        init(bundleID: String, pushType: APNsPushType) {
            self.bundleID = bundleID
            self.pushType = pushType
        }

        init?(_ push: Push) {
            guard push.pushType == .background || push.pushType == .widgets else { return nil }
            self.init(bundleID: push.bundleID, pushType: push.pushType)
        }

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.bundleID, lhs.pushType.rawValue) < (rhs.bundleID, rhs.pushType.rawValue)
        }
    }

    /// A budget's pushes per window at `date`, and its window in seconds. With a seed, an app's background budget is
    /// drawn for each clock hour from the upper figure and the one below it (Y-10: "two or three").
    private func allowance(of budget: Budgeted, at date: Date) -> (count: Int, window: TimeInterval) {
        guard budget.pushType == .background else { return (rules.widgetPushesPerDay, 86_400) }
        guard let seed = rules.seed else { return (rules.backgroundPushesPerHour, 3_600) }
        let hour = UInt64(max(0, (date.timeIntervalSince1970 / 3_600).rounded(.down)))
        let lower = Self.draw(seed, "background budget", budget.bundleID, hour) % 2 == 0
        return (max(1, rules.backgroundPushesPerHour - (lower ? 1 : 0)), 3_600)
    }

    /// How long after power restrictions lift the burst comes: at once without a seed, else drawn (D-06).
    private mutating func drawnBurstDelay() -> TimeInterval {
        guard let seed = rules.seed else { return 0 }
        bursts += 1
        let limit = UInt64(max(0, rules.longestBurstDelay.rounded(.down)))
        return TimeInterval(Self.draw(seed, "burst", "", bursts) % (limit + 1))
    }

    /// A number that depends only on the seed and what it is drawn for (FNV-1a of the names, then SplitMix64): never on
    /// the process (Swift's `hashValue` is seeded per process).
    private static func draw(_ seed: UInt64, _ purpose: String, _ name: String, _ index: UInt64) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (purpose + "\u{0}" + name).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        var generator = SplitMix64(seed: seed ^ hash ^ (index &* 0x9E37_79B9_7F4A_7C15))
        return generator.next()
    }

    /// Why the push with this ID is held, if it is.
    public func hold(of id: String) -> Hold? {
        if let entry = waiting.first(where: { $0.push.id == id }) { return entry.hold }
        guard let push = heldBackground.values.first(where: { $0.id == id }) else { return nil }
        return push.pushType == .widgets ? .widgetBudget : .backgroundBudget
    }

    /// When ``advance(to:)`` next has something to do: a held background push's slot, a held push's expiry.
    public var nextDeadline: Date? {
        var deadlines = heldBackground.keys.map { backgroundSlot(for: $0) }
        if let burstAt { deadlines.append(burstAt) }
        deadlines += held.compactMap(\.expiresAt)
        return deadlines.min()
    }

    // MARK: Events

    /// A push arrives at `now` (time is first brought to `now`, as ``advance(to:)`` does).
    public mutating func arrive(_ push: Push, at now: Date) -> [Decision] {
        guard kind == .iphone else { return [.delivered(push, fromStorage: false)] }
        var decisions = advance(to: now)
        if push.pushType == .alert, disabledApps.contains(push.bundleID) {
            return decisions + [.discarded(push, .disabled, fromStorage: false)]
        }
        var effective = push.priority
        if push.pushType == .liveactivity, push.priority == .immediate, let activity = push.activityID {
            // Y-13: priority 10 spends the activity's budget; beyond it, the update goes as priority 5 would.
            let budget =
                frequentUpdateApps.contains(push.bundleID)
                ? rules.frequentLiveActivityUpdatesPerHour : rules.liveActivityUpdatesPerHour
            var spent = liveActivityUpdates[activity, default: []].filter { now.timeIntervalSince($0) < 3_600 }
            if spent.count < budget {
                spent.append(now)
            } else {
                effective = .throttled
            }
            liveActivityUpdates[activity] = spent
        }
        if effective == .immediate {
            // A priority-10 push wakes the device: what waited for a wake comes with it.
            decisions += admit(push, at: now, fromStorage: false)
            decisions += wake(at: now)
            return decisions
        }
        if isPowerRestricted || burstAt != nil {
            // Held while restricted, and grouped with the burst still to come.
            waiting.append((push, .powerConsiderations))
            return decisions + [.held(push, .powerConsiderations)]
        }
        if effective == .low {
            waiting.append((push, .untilWake))
            return decisions + [.held(push, .untilWake)]
        }
        return decisions + admit(push, at: now, fromStorage: false)
    }

    /// The device's power restrictions start or end at `now`; when they end, what they held comes in one burst (D-07),
    /// except priority 1, which still waits for a wake — at once, or with a seed after a drawn delay, with what came
    /// meanwhile at priority 5 grouped into it (D-06).
    public mutating func setPowerRestricted(_ restricted: Bool, at now: Date) -> [Decision] {
        let decisions = advance(to: now)
        isPowerRestricted = restricted
        guard !restricted else {
            burstAt = nil
            return decisions
        }
        guard waiting.contains(where: { $0.hold == .powerConsiderations }) else { return decisions }
        let delay = drawnBurstDelay()
        guard delay > 0 else { return decisions + burst(at: now) }
        burstAt = now.addingTimeInterval(delay)
        return decisions
    }

    /// Hands over what power restrictions held, in one burst (D-07), except priority 1, which still waits for a wake.
    private mutating func burst(at now: Date) -> [Decision] {
        burstAt = nil
        var decisions: [Decision] = []
        let released = waiting.filter { $0.hold == .powerConsiderations }
        waiting.removeAll { $0.hold == .powerConsiderations }
        for (push, _) in released {
            if push.priority == .low {
                waiting.append((push, .untilWake))
                decisions.append(.held(push, .untilWake))
            } else {
                decisions += admit(push, at: now, fromStorage: true)
            }
        }
        return decisions
    }

    /// The device wakes at `now` (the person looks at it): priority-1 pushes come in, unless power restrictions hold
    /// them.
    public mutating func wake(at now: Date) -> [Decision] {
        guard kind == .iphone else { return [] }
        var decisions = advance(to: now)
        guard !isPowerRestricted else { return decisions }
        let released = waiting.filter { $0.hold == .untilWake }
        waiting.removeAll { $0.hold == .untilWake }
        for (push, _) in released { decisions += admit(push, at: now, fromStorage: true) }
        return decisions
    }

    /// The app is launched at `now`: the device wakes, and the app's held background push is handed over (Y-10:
    /// "app launch delivers it").
    public mutating func appLaunched(_ bundleID: String, at now: Date) -> [Decision] {
        var decisions = wake(at: now)
        let budget = Budgeted(bundleID: bundleID, pushType: .background)
        if let push = heldBackground.removeValue(forKey: budget) {
            backgroundHandedOver[budget, default: []].append(now)
            decisions.append(.delivered(push, fromStorage: true))
        }
        return decisions
    }

    /// The app is force-quit at `now`: its held background push is discarded (Y-10).
    public mutating func appForceQuit(_ bundleID: String, at now: Date) -> [Decision] {
        let decisions = advance(to: now)
        guard let push = heldBackground.removeValue(forKey: Budgeted(bundleID: bundleID, pushType: .background)) else {
            return decisions
        }
        return decisions + [.discarded(push, .forceQuit, fromStorage: true)]
    }

    /// Takes back a push held before the device restarted, held for the same reason (a background push only if it is
    /// its app's newest).
    public mutating func restore(_ push: Push, heldFor hold: Hold) {
        switch hold {
        case .backgroundBudget, .widgetBudget: Budgeted(push).map { heldBackground[$0] = push }
        case .powerConsiderations, .untilWake:
            waiting.append((push, hold))
            // Held for power on a device whose restrictions lifted before it restarted: the burst is due.
            if hold == .powerConsiderations, !isPowerRestricted, burstAt == nil { burstAt = .distantPast }
        }
    }

    /// Turns an app's notifications on or off.
    mutating func setNotificationsEnabled(_ enabled: Bool, for bundleID: String) {
        if enabled { disabledApps.remove(bundleID) } else { disabledApps.insert(bundleID) }
    }

    /// Says whether an app has `NSSupportsLiveActivitiesFrequentUpdates`.
    public mutating func setFrequentUpdates(_ frequent: Bool, for bundleID: String) {
        if frequent { frequentUpdateApps.insert(bundleID) } else { frequentUpdateApps.remove(bundleID) }
    }

    /// Time passes to `now`: held pushes whose expiry passed are discarded, and held background pushes whose app has
    /// a slot again are handed over.
    public mutating func advance(to now: Date) -> [Decision] {
        var decisions: [Decision] = []
        for (push, _) in waiting where push.expiresAt.map({ $0 <= now }) == true {
            decisions.append(.discarded(push, .expired, fromStorage: true))
        }
        waiting.removeAll { $0.push.expiresAt.map { $0 <= now } == true }
        if let burstAt, burstAt <= now { decisions += burst(at: now) }
        for budget in heldBackground.keys.sorted() {
            guard let push = heldBackground[budget] else { continue }
            if let expiry = push.expiresAt, expiry <= now {
                heldBackground[budget] = nil
                decisions.append(.discarded(push, .expired, fromStorage: true))
            } else if backgroundSlot(for: budget) <= now {
                heldBackground[budget] = nil
                decisions += admit(push, at: now, fromStorage: true)
            }
        }
        return decisions
    }

    // MARK: Rules

    /// Hands a push to its app unless its app's background budget holds it (Y-10).
    private mutating func admit(_ push: Push, at now: Date, fromStorage: Bool) -> [Decision] {
        guard let budget = Budgeted(push) else { return [.delivered(push, fromStorage: fromStorage)] }
        let allowance = allowance(of: budget, at: now)
        var handedOver = backgroundHandedOver[budget, default: []].filter { now.timeIntervalSince($0) < allowance.window }
        defer { backgroundHandedOver[budget] = handedOver }
        if handedOver.count < allowance.count, heldBackground[budget] == nil {
            handedOver.append(now)
            return [.delivered(push, fromStorage: fromStorage)]
        }
        // Only the newest held background push is kept.
        var decisions: [Decision] = []
        if let older = heldBackground[budget] { decisions.append(.discarded(older, .superseded, fromStorage: true)) }
        heldBackground[budget] = push
        decisions.append(.held(push, budget.pushType == .widgets ? .widgetBudget : .backgroundBudget))
        return decisions
    }

    /// When an app's budget next has a slot: the first instant a hand-over leaves the window (or, with a seed, a new
    /// hour's budget begins) at which fewer than the budget were handed over within the window; at once when there is
    /// room.
    private func backgroundSlot(for budget: Budgeted) -> Date {
        let handedOver = backgroundHandedOver[budget, default: []]
        guard let last = handedOver.last else { return .distantPast }
        let window = allowance(of: budget, at: last).window
        var candidates = handedOver.map { $0.addingTimeInterval(window) }
        if rules.seed != nil, budget.pushType == .background {
            // Each clock hour from the last hand-over until the window is past draws a budget of its own.
            var hour = (last.timeIntervalSince1970 / 3_600).rounded(.down) * 3_600 + 3_600
            while hour < last.timeIntervalSince1970 + window {
                candidates.append(Date(timeIntervalSince1970: hour))
                hour += 3_600
            }
        }
        candidates.sort()
        for candidate in candidates {
            let spent = handedOver.filter { candidate.timeIntervalSince($0) < window }.count
            if spent < allowance(of: budget, at: candidate).count { return candidate }
        }
        return candidates.last ?? .distantPast
    }
}
