#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Random (version 4) UUIDs as lowercase strings, the form APNs uses for `apns-id` and `apns-unique-id`.
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
        var uuid = [UInt8](repeating: 0, count: 16)
        pool.withLock { pool in
            if pool.next + 16 > bytesPerRefill {
                fill(&pool.bytes)
                pool.next = 0
            }
            for index in 0..<16 { uuid[index] = pool.bytes[pool.next + index] }
            pool.next += 16
        }
        uuid[6] = 0x40 | (uuid[6] & 0x0F)  // version 4
        uuid[8] = 0x80 | (uuid[8] & 0x3F)  // RFC 4122 variant
        return format(uuid)
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
