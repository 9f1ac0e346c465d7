import NIOCore

/// HPACK (RFC 7541) for the requests of one HTTP/2 connection: the fields that repeat (the method, the topic, the
/// provider token) go into the dynamic table once and are then sent as one-byte or two-byte references; the fields
/// that differ per request (a device's path, an `apns-id`) are sent literally and never indexed.
///
/// Strings are written without Huffman coding: the per-request values are short hex and UUIDs (Huffman would save a
/// third of ~110 bytes a request at the cost of a table walk per byte), and the repeated ones are sent once.
/// The table's entries are only ever added by this encoder, so which index names which field is known without a search.
package struct HeaderBlockEncoder {
    /// One header field to encode.
    package struct Field: Sendable {
        var name: String
        var value: String
        /// Whether the field may go into the dynamic table (values that repeat from request to request); otherwise it
        /// is sent literally, without indexing.
        var isIndexable: Bool

        package init(_ name: String, _ value: String, isIndexable: Bool = true) {
            self.name = name
            self.value = value
            self.isIndexable = isIndexable
        }
    }

    private struct Entry {
        var name: String
        var size: Int
    }

    /// The table size this encoder uses when the peer allows it (RFC 9113 §6.5.2's initial value).
    static let preferredTableSize = 4096

    /// Entries, oldest first.
    private var entries = CircularBuffer<Entry>()
    /// The fields in the table by name: each value with its insertion number, oldest first. Found by name, then by
    /// comparing values, so a request builds no key and hashes no value (the provider token is ~250 bytes).
    private var insertionsByName: [String: [(value: String, insertion: Int)]] = [:]
    /// How many entries were ever inserted; the newest has insertion number `insertions - 1`.
    private var insertions = 0
    /// The summed size of the entries (RFC 7541 §4.1: name + value + 32 each).
    private var tableSize = 0
    /// The dynamic table's maximum size, as last signalled to the peer (or its initial 4,096).
    private(set) var maximumTableSize = HeaderBlockEncoder.preferredTableSize
    /// A size update owed at the start of the next block (RFC 7541 §4.2), after the peer lowered its limit.
    private var pendingSizeUpdate: Int?

    init() {}

    /// Takes the peer's `SETTINGS_HEADER_TABLE_SIZE`: the table shrinks (and says so in the next block) when the
    /// limit is below what it uses; a higher limit changes nothing, as this encoder never uses more than 4,096.
    ///
    /// - Parameter limit: The peer's limit, in bytes.
    mutating func setPeerLimit(_ limit: Int) {
        let size = min(limit, Self.preferredTableSize)
        guard size != maximumTableSize else { return }
        maximumTableSize = size
        pendingSizeUpdate = min(pendingSizeUpdate ?? size, size)
        evict(toFit: 0)
    }

    /// Appends the header block of `fields`, in order, to `buffer`.
    ///
    /// - Parameters:
    ///   - fields: The fields: pseudo-header fields first, names in lower case.
    ///   - buffer: Where the block goes.
    mutating func encode(_ fields: [Field], into buffer: inout ByteBuffer) {
        if let smallest = pendingSizeUpdate {
            // The smallest limit since the last block, then the one in force (§4.2).
            pendingSizeUpdate = nil
            buffer.writeHPACKInteger(smallest, prefix: 5, flags: 0x20)
            if smallest != maximumTableSize { buffer.writeHPACKInteger(maximumTableSize, prefix: 5, flags: 0x20) }
        }
        for field in fields { encode(field, into: &buffer) }
    }

    private mutating func encode(_ field: Field, into buffer: inout ByteBuffer) {
        if let index = Self.staticExactIndex(field.name, field.value) {
            buffer.writeHPACKInteger(index, prefix: 7, flags: 0x80)
            return
        }
        guard field.isIndexable else {
            // Literal without indexing (§6.2.2).
            writeLiteral(field, prefix: 4, flags: 0x00, into: &buffer)
            return
        }
        if let insertion = insertionsByName[field.name]?.last(where: { $0.value == field.value })?.insertion {
            buffer.writeHPACKInteger(Self.staticTableCount + insertions - insertion, prefix: 7, flags: 0x80)
            return
        }
        let size = field.name.utf8.count + field.value.utf8.count + 32
        guard size <= maximumTableSize else {
            writeLiteral(field, prefix: 4, flags: 0x00, into: &buffer)
            return
        }
        // Literal with incremental indexing (§6.2.1): the peer adds it to its table as this encoder does here.
        writeLiteral(field, prefix: 6, flags: 0x40, into: &buffer)
        evict(toFit: size)
        entries.append(Entry(name: field.name, size: size))
        insertionsByName[field.name, default: []].append((field.value, insertions))
        insertions += 1
        tableSize += size
    }

    private func writeLiteral(_ field: Field, prefix: Int, flags: UInt8, into buffer: inout ByteBuffer) {
        if let nameIndex = Self.staticNameIndex[field.name] {
            buffer.writeHPACKInteger(nameIndex, prefix: prefix, flags: flags)
        } else {
            buffer.writeInteger(flags)
            buffer.writeHPACKString(field.name)
        }
        buffer.writeHPACKString(field.value)
    }

    /// Evicts the oldest entries until `size` more bytes fit (§4.4).
    private mutating func evict(toFit size: Int) {
        while tableSize + size > maximumTableSize, let oldest = entries.popFirst() {
            tableSize -= oldest.size
            // The oldest entry is the first of its name's.
            insertionsByName[oldest.name]?.removeFirst()
            if insertionsByName[oldest.name]?.isEmpty == true { insertionsByName[oldest.name] = nil }
        }
    }

    // MARK: The static table (RFC 7541 Appendix A)

    /// The static table's length; the dynamic table's newest entry is index 62.
    static let staticTableCount = 61

    /// The fields of the static table a request can use whole.
    private static func staticExactIndex(_ name: String, _ value: String) -> Int? {
        switch (name, value) {
        case (":method", "GET"): 2
        case (":method", "POST"): 3
        case (":path", "/"): 4
        case (":scheme", "http"): 6
        case (":scheme", "https"): 7
        default: nil
        }
    }

    /// The first index of each name in the static table.
    private static let staticNameIndex: [String: Int] = {
        let names = [
            ":authority", ":method", ":method", ":path", ":path", ":scheme", ":scheme", ":status", ":status", ":status",
            ":status", ":status", ":status", ":status", "accept-charset", "accept-encoding", "accept-language",
            "accept-ranges", "accept", "access-control-allow-origin", "age", "allow", "authorization", "cache-control",
            "content-disposition", "content-encoding", "content-language", "content-length", "content-location",
            "content-range", "content-type", "cookie", "date", "etag", "expect", "expires", "from", "host", "if-match",
            "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "link", "location",
            "max-forwards", "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh", "retry-after",
            "server", "set-cookie", "strict-transport-security", "transfer-encoding", "user-agent", "vary", "via",
            "www-authenticate",
        ]
        var index: [String: Int] = [:]
        for (offset, name) in names.enumerated() where index[name] == nil { index[name] = offset + 1 }
        return index
    }()
}

extension ByteBuffer {
    /// Writes `value` as an HPACK integer with an `prefix`-bit prefix, `flags` in the first byte's other bits (RFC
    /// 7541 §5.1).
    mutating func writeHPACKInteger(_ value: Int, prefix: Int, flags: UInt8) {
        let limit = (1 << prefix) - 1
        guard value >= limit else {
            writeInteger(flags | UInt8(value))
            return
        }
        writeInteger(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        writeInteger(UInt8(rest))
    }

    /// Writes `string` as an HPACK string literal without Huffman coding (§5.2).
    mutating func writeHPACKString(_ string: String) {
        writeHPACKInteger(string.utf8.count, prefix: 7, flags: 0)
        writeString(string)
    }
}
