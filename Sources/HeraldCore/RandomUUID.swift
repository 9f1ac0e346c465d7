import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Random (version 4) and time-ordered (version 7) UUIDs as lowercase strings, the form APNs uses for `apns-id` and `apns-unique-id`.
///
/// Foundation's `UUID()` opens, reads and closes `/dev/urandom` for every UUID on Linux — three system calls per
/// identifier, twice per push. This source draws the operating system's randomness 4 KiB at a time (256 UUIDs per
/// call) and formats the text directly.
package enum RandomUUID {
    private static let bytesPerRefill = 4096
    /// Random bytes and the first one not handed out yet (none at first: the first UUID fills the pool).
    private static let pool = Mutex<(bytes: [UInt8], next: Int)>(
        ([UInt8](repeating: 0, count: bytesPerRefill), bytesPerRefill))

    /// A new random UUID, e.g. `"77b1d7c4-7c3a-4d55-a8f0-1c2b3a4d5e6f"`.
    package static func lowercasedString() -> String {
        var uuid = randomBytes()
        uuid[6] = 0x40 | (uuid[6] & 0x0F)  // version 4
        uuid[8] = 0x80 | (uuid[8] & 0x3F)  // RFC 4122 variant
        return format(uuid)
    }

    /// A new time-ordered (version 7, RFC 9562) UUID for `instant`, e.g. `"019aa3c2-5f10-7a3b-9c4d-…"`.
    ///
    /// The first 48 bits are the Unix time in milliseconds and the next 12 the fraction of that millisecond
    /// (RFC 9562 §6.2, method 3), the other 62 random: identifiers made later sort later, so an index over them
    /// grows at one end instead of touching a random page per insert.
    ///
    /// - Parameter instant: When the identifier is made; times before 1970 count as 1970.
    package static func timeOrderedLowercasedString(at instant: Date) -> String {
        var uuid = randomBytes()
        let microseconds = UInt64(max(0, (instant.timeIntervalSince1970 * 1_000_000).rounded(.down)))
        let milliseconds = microseconds / 1_000 & 0xFFFF_FFFF_FFFF
        let fraction = (microseconds % 1_000) * 4_096 / 1_000  // 12 bits
        for index in 0..<6 { uuid[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
        uuid[6] = 0x70 | UInt8(truncatingIfNeeded: fraction >> 8)  // version 7
        uuid[7] = UInt8(truncatingIfNeeded: fraction)
        uuid[8] = 0x80 | (uuid[8] & 0x3F)  // RFC 4122 variant
        return format(uuid)
    }

    /// 16 bytes from the pool, refilling it when it runs out.
    private static func randomBytes() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        pool.withLock { pool in
            if pool.next + 16 > bytesPerRefill {
                fill(&pool.bytes)
                pool.next = 0
            }
            for index in 0..<16 { bytes[index] = pool.bytes[pool.next + index] }
            pool.next += 16
        }
        return bytes
    }

    /// The 8-4-4-4-12 lowercase text of 16 bytes.
    package static func format(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16)
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = .lowercaseHexDigit(byte >> 4)
                text[position + 1] = .lowercaseHexDigit(byte & 0x0F)
                position += 2
            }
            return position
        }
    }

    private static func fill(_ bytes: inout [UInt8]) {
        #if canImport(Glibc) || canImport(Musl)
        // One read of the kernel's random device per 256 UUIDs.
        let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            defer { close(descriptor) }
            let filled = bytes.withUnsafeMutableBytes { buffer -> Bool in
                var offset = 0
                while offset < buffer.count {
                    let count = read(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { return false }
                    offset += count
                }
                return true
            }
            if filled { return }
        }
        #endif
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
    }
}
