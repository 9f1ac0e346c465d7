import Foundation

/// The scheduler's queue: a binary min-heap of (fire time, store sequence), 16 bytes an entry.
///
/// Entries are never removed in place: a removed or replaced request's entry stays until it surfaces, and the
/// store then says it is stale. That keeps every change O(log n) and the memory to two words per request.
struct ScheduleHeap: Sendable {
    /// What the heap orders: the store's schedule entries.
    typealias Entry = ScheduleEntry

    private var entries: [Entry] = []

    init() {}

    /// Builds a heap from unordered entries in O(n).
    init(_ unordered: [Entry]) {
        entries = unordered
        if entries.count > 1 {
            for index in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        }
    }

    var count: Int { entries.count }

    /// Every entry, in heap order (not sorted): for rebuilding a heap together with other entries.
    var unorderedEntries: [Entry] { entries }
    var first: Entry? { entries.first }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    /// Removes and returns every entry due at or before `time`, soonest first, at most `limit`.
    mutating func popDue(upTo time: Double, limit: Int) -> [Entry] {
        var due: [Entry] = []
        while due.count < limit, let top = entries.first, top.fireTime <= time {
            due.append(top)
            let last = entries.removeLast()
            if !entries.isEmpty {
                entries[0] = last
                siftDown(0)
            }
        }
        return due
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        let entry = entries[child]
        while child > 0 {
            let parent = (child - 1) / 2
            if entries[parent].fireTime <= entry.fireTime { break }
            entries[child] = entries[parent]
            child = parent
        }
        entries[child] = entry
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let entry = entries[parent]
        let count = entries.count
        while true {
            var child = 2 * parent + 1
            if child >= count { break }
            if child + 1 < count, entries[child + 1].fireTime < entries[child].fireTime { child += 1 }
            if entry.fireTime <= entries[child].fireTime { break }
            entries[parent] = entries[child]
            parent = child
        }
        entries[parent] = entry
    }
}
