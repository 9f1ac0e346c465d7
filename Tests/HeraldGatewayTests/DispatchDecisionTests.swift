import Foundation
import HeraldCore
import HeraldFaults
import Testing

@testable import HeraldGateway

/// The gateway's one dispatch decision (issue 65), without I/O: what becomes of an accepted push given what is known.
@Suite struct DispatchDecisionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let oneNode = DispatchDecision.Rules(
        storageLifetime: .seconds(30 * 24 * 3600), acknowledgementTimeout: .seconds(10), severalNodes: false)
    static var severalNodes: DispatchDecision.Rules {
        var rules = oneNode
        rules.severalNodes = true
        return rules
    }

    static func decide(
        repeating: String? = nil, connected: Bool = false, _ expiration: APNsRequestHeaders.Expiration = .storagePolicy,
        _ rules: DispatchDecision.Rules = oneNode
    ) -> DispatchDecision {
        DispatchDecision(repeating: repeating, connectedHere: connected, expiration: expiration, now: now, rules: rules)
    }

    @Test("A provider's retry of a push accepted lately is not delivered again, wherever its device is")
    func retry() {
        for connected in [false, true] {
            for rules in [Self.oneNode, Self.severalNodes] {
                #expect(Self.decide(repeating: "u1", connected: connected, .immediately, rules) == .discardDuplicate(of: "u1"))
            }
        }
    }

    @Test("A device connected here gets the push, whatever its expiration")
    func connected() {
        for expiration: APNsRequestHeaders.Expiration in [.storagePolicy, .immediately, .at(Self.now.addingTimeInterval(60))] {
            #expect(Self.decide(connected: true, expiration) == .deliver)
            #expect(Self.decide(connected: true, expiration, Self.severalNodes) == .deliver)
        }
    }

    @Test(
        "APNs §5, D-05: an offline device's push is kept until its expiration, within the storage lifetime; expiration 0 or passed is discarded on one node"
    )
    func offline() {
        let lifetime = Self.now.addingTimeInterval(30 * 24 * 3600)
        let inAnHour = Self.now.addingTimeInterval(3600)
        #expect(Self.decide(.storagePolicy) == .offline(.keep(until: lifetime)))
        #expect(Self.decide(.at(inAnHour)) == .offline(.keep(until: inAnHour)))
        #expect(Self.decide(.at(lifetime.addingTimeInterval(1))) == .offline(.keep(until: lifetime)), "within the lifetime")
        #expect(Self.decide(.at(Self.now)) == .offline(.discardExpired), "an expiration that is now has passed")
        #expect(Self.decide(.at(Self.now.addingTimeInterval(-1))) == .offline(.discardExpired))
        #expect(Self.decide(.immediately) == .offline(.discardExpired), "one node: nowhere else to try")
    }

    @Test(
        "D-05 on several nodes: expiration 0 is one attempt through the device's node within the acknowledgement timeout; the rest as on one"
    )
    func severalNodes() {
        #expect(Self.decide(.immediately, Self.severalNodes) == .offline(.relayOnce(until: Self.now.addingTimeInterval(10))))
        #expect(Self.decide(.at(Self.now), Self.severalNodes) == .offline(.discardExpired))
        #expect(
            Self.decide(.storagePolicy, Self.severalNodes)
                == .offline(.keep(until: Self.now.addingTimeInterval(30 * 24 * 3600))))
    }

    @Test(
        "Issue 66: a fault rule's refusal (an APNs answer, a GOAWAY before its stream, RST_STREAM REFUSED_STREAM) decides before everything else — a retry, a connected device, an offline one; a delay, a close or another reset decides nothing (the push goes its way, its answer late or lost)"
    )
    func faults() {
        let refusal = FaultHit(ruleID: "fault-1", action: .answer(FaultAnswer(status: 429, reason: "TooManyRequests")))
        let delay = FaultHit(ruleID: "fault-2", action: .delay(seconds: 2))
        for (repeating, connected) in [("u1", false), (nil, true), (nil, false)] as [(String?, Bool)] {
            let refused = DispatchDecision(
                fault: refusal, repeating: repeating, connectedHere: connected, expiration: .storagePolicy, now: Self.now,
                rules: Self.oneNode)
            #expect(refused == .refuse(FaultRefusal(hit: refusal)))
            for action: FaultHit.Action in [.goAway(reason: "Shutdown"), .resetStream(code: "REFUSED_STREAM")] {
                let hit = FaultHit(ruleID: "fault-3", action: action)
                #expect(
                    DispatchDecision(
                        fault: hit, repeating: repeating, connectedHere: connected, expiration: .storagePolicy, now: Self.now,
                        rules: Self.oneNode) == .refuse(FaultRefusal(hit: hit)))
            }
            // Handled as usual, its answer lost: a close, a reset that does not say "not processed".
            for action: FaultHit.Action in [.close, .resetStream(code: "INTERNAL_ERROR")] {
                #expect(
                    DispatchDecision(
                        fault: FaultHit(ruleID: "fault-4", action: action), repeating: repeating, connectedHere: connected,
                        expiration: .storagePolicy, now: Self.now, rules: Self.oneNode)
                        == Self.decide(repeating: repeating, connected: connected))
            }
            let delayed = DispatchDecision(
                fault: delay, repeating: repeating, connectedHere: connected, expiration: .storagePolicy, now: Self.now,
                rules: Self.oneNode)
            #expect(delayed == Self.decide(repeating: repeating, connected: connected))
        }
    }
}
