import NIOCore
import NIOHPACK

extension ProviderRequest: StreamRequest {
    /// The request a HEADERS block starts: method, path without query, the other fields in order.
    init(head: HPACKHeaders) {
        var method = ""
        var path = ""
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(head.count)
        for (name, value, _) in head {
            switch name {
            case ":method": method = value
            case ":path":
                // By bytes: a path without a query (every push's) is taken as it is, not copied.
                path = value.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(value[..<$0]) } ?? value
            default: if !name.hasPrefix(":") { fields.append((name: name, value: value)) }
            }
        }
        self.init(method: method, path: path, fields: fields)
    }

    mutating func appendBody(_ bytes: ByteBuffer) {
        appendPayload(bytes)
    }
}
