import Foundation
import HeraldConsole
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine

extension WidgetStatus {
    /// The widget as the test-bed API writes it (`GET /api/v1/widgets`) and `herald widgets list --json` prints it,
    /// with WidgetKit's names: its kind, family, the entry shown at `now` and its whole timeline.
    ///
    /// - Parameter now: The time whose entry is shown.
    func testBedWidget(at now: Date) -> TestBedWidget {
        let entry = { (entry: WidgetTimelineRecord.Entry) -> JSONValue in
            .members([
                "date": .time(entry.date), "text": .string(entry.text), "relevance": entry.relevance.map(JSONValue.number),
            ])
        }
        let json = JSONValue.members([
            "bundleID": .string(bundleID), "kind": .string(declared.kind), "isControl": .bool(declared.isControl),
            "family": declared.isControl ? nil : (timeline?.family ?? declared.families.first).map(JSONValue.string),
            "takesPushes": .bool(declared.takesPushes),
            "reloadedAt": reloadedAt.map(JSONValue.time), "reason": timeline.map { .string($0.reason) },
            "reloadPending": .bool(reloadPending),
            "entry": timeline?.entry(at: now).map(entry), "policy": timeline.map { .string($0.policy) },
            "entries": timeline.map { .array($0.entries.map(entry)) },
        ])
        return TestBedWidget(
            bundleID: bundleID, kind: declared.kind, isControl: declared.isControl, reloadedAt: reloadedAt,
            reloadPending: reloadPending, json: json)
    }
}
