import Foundation
import HeraldCore
import Testing

/// A13: a `liveactivity` push's `aps` as ActivityKit reads it.
@Suite struct LiveActivityPushTests {
    @Test(
        "An update: timestamp, content-state as compact JSON, stale and dismissal dates, relevance, a localized alert with its sound"
    )
    func update() throws {
        let push = try LiveActivityPush(
            payload: """
                {"aps":{"timestamp":1685952000,"event":"update","content-state":{"driver":"Anne","eta":{"min":5}},
                "stale-date":1685959200,"dismissal-date":1685966400,"relevance-score":50,
                "alert":{"title":{"loc-key":"delivery.title","loc-args":["Anne"]},"body":"On the way","sound":"chime.aiff"}}}
                """,
            strings: LocalizedStringTable(strings: ["delivery.title": "%@ is coming"]))
        #expect(push.event == .update && push.timestamp == 1_685_952_000)
        #expect(push.contentState == #"{"driver":"Anne","eta":{"min":5}}"#)
        #expect(push.staleDate == Date(timeIntervalSince1970: 1_685_959_200))
        #expect(push.dismissalDate == Date(timeIntervalSince1970: 1_685_966_400))
        #expect(push.relevanceScore == 50)
        #expect(push.alertTitle == "Anne is coming" && push.alertBody == "On the way" && push.alertSound == "chime.aiff")
        #expect(push.hasAlert && !push.wantsPushToken && push.pushChannel == nil)
    }

    @Test(
        "A start carries attributes-type, attributes and input-push-token or input-push-channel; an end may leave the content out"
    )
    func startAndEnd() throws {
        let start = try LiveActivityPush(
            payload: """
                {"aps":{"timestamp":1,"event":"start","attributes-type":"DeliveryAttributes","attributes":{"order":"A1"},
                "content-state":{"eta":5},"alert":"Order A1","input-push-channel":"dGVzdA==","sound":"default"}}
                """)
        #expect(start.event == .start && start.attributesType == "DeliveryAttributes" && start.attributes == #"{"order":"A1"}"#)
        #expect(start.alertBody == "Order A1" && start.alertTitle == nil && start.alertSound == "default")
        #expect(start.pushChannel == "dGVzdA==")
        #expect(
            try LiveActivityPush(
                payload:
                    #"{"aps":{"timestamp":1,"event":"start","attributes-type":"T","attributes":{},"content-state":{},"input-push-token":1}}"#
            ).wantsPushToken)
        let end = try LiveActivityPush(payload: #"{"aps":{"timestamp":2.5,"event":"end"}}"#)
        #expect(end.event == .end && end.contentState == nil && end.timestamp == 2.5 && !end.hasAlert)
    }

    @Test(
        "What is not a Live Activity push says why",
        arguments: [
            (#"[]"#, LiveActivityPush.Failure.notAnObject),
            (#"{"aps":1}"#, .notAnObject),
            (#"{"aps":{"timestamp":1,"event":"pause","content-state":{}}}"#, .badEvent),
            (#"{"aps":{"timestamp":1,"content-state":{}}}"#, .badEvent),
            (#"{"aps":{"event":"update","content-state":{}}}"#, .missingTimestamp),
            (#"{"aps":{"timestamp":"now","event":"update","content-state":{}}}"#, .missingTimestamp),
            (#"{"aps":{"timestamp":1,"event":"update"}}"#, .missingContentState),
            (#"{"aps":{"timestamp":1,"event":"update","content-state":[1]}}"#, .missingContentState),
            (#"{"aps":{"timestamp":1,"event":"start","content-state":{}}}"#, .missingAttributes),
            (
                #"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"T","attributes":"x"}}"#,
                .missingAttributes
            ),
        ])
    func refused(_ payload: String, _ failure: LiveActivityPush.Failure) {
        #expect(throws: failure) { try LiveActivityPush(payload: payload) }
    }
}
