import Foundation
import HeraldCore
import Testing

/// Identifiers the gateway hands out (APNs ).
@Suite struct RandomUUIDTests {
    @Test("R-01: generated apns-ids are random version-4 UUIDs in lowercase 8-4-4-4-12 form")
    func randomUUIDs() throws {
        var seen = Set<String>()
        // More than one refill of the random pool (256 UUIDs per refill).
        for _ in 0..<1_000 {
            let text = RandomUUID.lowercasedString()
            #expect(APNsRequestHeaders.isCanonicalUUID(text))
            #expect(text == text.lowercased())
            let characters = Array(text)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            #expect(UUID(uuidString: text) != nil)
            seen.insert(text)
        }
        #expect(seen.count == 1_000)
        #expect(RandomUUID.format(Array(0..<16)) == "00010203-0405-0607-0809-0a0b0c0d0e0f")
    }

    @Test("R-03: apns-unique-ids are version-7 UUIDs: the instant's milliseconds first, later ones sort later, all unique")
    func timeOrderedUUIDs() throws {
        let start = Date(timeIntervalSince1970: 1_795_000_000.123_456)
        let milliseconds = UInt64(1_795_000_000_123)
        let first = RandomUUID.timeOrderedLowercasedString(at: start)
        let hex = first.replacingOccurrences(of: "-", with: "")
        #expect(UInt64(hex.prefix(12), radix: 16) == milliseconds)
        #expect(APNsRequestHeaders.isCanonicalUUID(first))
        #expect(Array(first)[14] == "7")
        #expect("89ab".contains(Array(first)[19]))
        var previous = first
        var seen: Set<String> = [first]
        // Ten microseconds apart (the 12-bit fraction of the millisecond orders them), across millisecond boundaries
        // and more than one refill of the random pool.
        for step in 1...1_000 {
            let text = RandomUUID.timeOrderedLowercasedString(at: start.addingTimeInterval(Double(step) * 0.000_01))
            #expect(text > previous)
            #expect(text == text.lowercased())
            previous = text
            seen.insert(text)
        }
        #expect(seen.count == 1_001)
        // The same instant twice: still unique (62 random bits).
        #expect(RandomUUID.timeOrderedLowercasedString(at: start) != RandomUUID.timeOrderedLowercasedString(at: start))
        // Before 1970 counts as 1970, never a crash.
        #expect(RandomUUID.timeOrderedLowercasedString(at: Date(timeIntervalSince1970: -5)).hasPrefix("00000000-0000-7"))
    }
}
