import Testing

@testable import HeraldConsole

/// Issue 64 (4): how the event stream's cursor reads the delivery log — nothing sent twice, nothing skipped that commits
/// late, a gap given up after its grace.
@Suite struct EventCursorTests {
    @Test("Events in order are sent once each, and the cursor moves past them")
    func inOrder() {
        var cursor = EventCursor(after: 10)
        let now = ContinuousClock.now
        #expect(cursor.take([11, 12, 13], sequence: { $0 }, now: now) == [11, 12, 13])
        #expect(cursor.settled == 13 && !cursor.waitsForGap)
        #expect(cursor.take([], sequence: { $0 }, now: now) == [])
        #expect(cursor.take([14], sequence: { $0 }, now: now) == [14])
    }

    @Test(
        "An event that commits after a later one (two writers on PostgreSQL) is still sent, once; the later one is not sent again"
    )
    func lateCommit() {
        var cursor = EventCursor(after: 0)
        let start = ContinuousClock.now
        // 2 is not committed yet when 3 is.
        #expect(cursor.take([1, 3], sequence: { $0 }, now: start) == [1, 3])
        #expect(cursor.settled == 1 && cursor.waitsForGap)
        // The next read is from 1: 3 again (not sent twice) and 2, committed now.
        #expect(cursor.take([2, 3, 4], sequence: { $0 }, now: start + .milliseconds(500)) == [2, 4])
        #expect(cursor.settled == 4 && !cursor.waitsForGap)
    }

    @Test("A gap that never fills (a removed event, a rolled-back write) is given up after the grace, and the cursor moves on")
    func gapGivenUp() {
        var cursor = EventCursor(after: 0)
        let start = ContinuousClock.now
        #expect(cursor.take([1, 5], sequence: { $0 }, now: start) == [1, 5])
        #expect(cursor.settled == 1)
        #expect(cursor.take([5, 6], sequence: { $0 }, now: start + .seconds(1)) == [6])
        #expect(cursor.settled == 1, "still within the grace")
        #expect(cursor.take([5, 6], sequence: { $0 }, now: start + EventCursor.grace) == [])
        #expect(cursor.settled == 6 && !cursor.waitsForGap)
    }

    @Test("A gap partly filled keeps the time it was first seen")
    func gapPartlyFilled() {
        var cursor = EventCursor(after: 0)
        let start = ContinuousClock.now
        #expect(cursor.take([1, 6], sequence: { $0 }, now: start) == [1, 6])
        #expect(cursor.take([3, 6], sequence: { $0 }, now: start + .seconds(1)) == [3])
        #expect(cursor.settled == 1 && cursor.waitsForGap)
        #expect(cursor.take([3, 6], sequence: { $0 }, now: start + EventCursor.grace) == [])
        #expect(cursor.settled == 6)
    }
}
