import Foundation
import HeraldCore
import Testing

/// Issue 69: the one reading of `aps` the gateway and the device share (docs/payloads.md).
@Suite struct PayloadReadingTests {
    static func kind(_ text: String) -> PayloadReading.Kind { PayloadReading(payload: Data(text.utf8)).kind }

    @Test("Each shape: alert, badge or sound alone, background, nothing, not a payload")
    func shapes() {
        #expect(Self.kind(#"{"aps":{"alert":"Hi"}}"#) == .alert)
        #expect(Self.kind(#"{"aps":{"alert":{"loc-key":"K"}}}"#) == .alert)
        #expect(Self.kind(#"{"aps":{"badge":0}}"#) == .badgeOnly)
        #expect(Self.kind(#"{"aps":{"sound":"default"}}"#) == .soundOnly)
        #expect(Self.kind(#"{"aps":{"sound":{"critical":1}}}"#) == .soundOnly)
        #expect(Self.kind(#"{"aps":{"badge":2,"sound":"x.caf"}}"#) == .badgeAndSound)
        #expect(Self.kind(#"{"aps":{"content-available":1}}"#) == .background)
        #expect(Self.kind(#"{"aps":{"content-available":1,"sound":""}}"#) == .background, "\"sound\": \"\" plays nothing")
        for nothing in [#"{"aps":{}}"#, #"{"aps":{"alert":{}}}"#, #"{"aps":{"alert":""}}"#, #"{"aps":{"sound":""}}"#] {
            #expect(Self.kind(nothing) == .nothing, "\(nothing)")
        }
        #expect(Self.kind(#"{"aps":"text"}"#) == .malformed(.apsNotADictionary))
        #expect(Self.kind(#"{"aps":null}"#) == .malformed(.apsNotADictionary))
        #expect(Self.kind(#"{"other":1}"#) == .malformed(.noAPS))
        #expect(Self.kind(#"[1]"#) == .malformed(.notAnObject))
        #expect(Self.kind("not json") == .malformed(.notAnObject))
    }

    @Test("true and false are 1 and 0 wherever Apple's keys take a number; content-available goes with what is shown")
    func booleansAsNumbers() throws {
        let background = PayloadReading(payload: Data(#"{"aps":{"content-available":true}}"#.utf8))
        #expect(background.kind == .background && background.contentAvailable)
        #expect(PayloadReading(payload: Data(#"{"aps":{"content-available":false}}"#.utf8)).kind == .nothing)
        let badge = PayloadReading(payload: Data(#"{"aps":{"badge":true,"mutable-content":true}}"#.utf8))
        #expect(badge.badge == 1 && badge.mutableContent)
        let both = PayloadReading(payload: Data(#"{"aps":{"alert":"x","content-available":1}}"#.utf8))
        #expect(both.kind == .alert && both.contentAvailable && both.isListed)
        let content = try RemoteNotificationContent(
            payload: Data(#"{"aps":{"alert":"x","sound":{"critical":true,"volume":true},"relevance-score":true}}"#.utf8))
        #expect(content.sound == .critical(name: nil, volume: 1))
        #expect(content.relevanceScore == 1)
        #expect(try RemoteNotificationContent(payload: Data(#"{"aps":{"alert":"x","sound":""}}"#.utf8)).sound == nil)
    }

    @Test("The gateway's push type, inferred from the same reading (S-04)")
    func inferredPushType() {
        func inferred(_ text: String) -> APNsPushType { .inferred(from: PayloadReading(payload: Data(text.utf8))) }
        #expect(inferred(#"{"aps":{"content-available":true}}"#) == .background)
        #expect(inferred(#"{"aps":{"content-available":1,"sound":""}}"#) == .background)
        #expect(inferred(#"{"aps":{"content-available":1,"badge":0}}"#) == .alert)
        #expect(inferred(#"{"aps":{"alert":"x"}}"#) == .alert)
        #expect(inferred(#"{"other":1}"#) == .alert)
        #expect(APNsPushType.inferred(from: nil) == .alert)
    }
}
