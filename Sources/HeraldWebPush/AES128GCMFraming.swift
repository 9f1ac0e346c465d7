import Foundation

/// The `aes128gcm` content coding's header as RFC 8188 frames it, with RFC 8291's rules for a push message: a push
/// service checks this much and relays the rest untouched (it cannot read the message).
///
/// `salt (16) ‖ rs (4, big-endian) ‖ idlen (1) ‖ keyid (idlen)`, then one record of at most `rs` bytes: the
/// ciphertext of the message, its padding delimiter and padding, and the 16-byte tag.
public struct AES128GCMFraming: Sendable, Hashable {
    /// The salt.
    public let salt: Data
    /// The record size.
    public let recordSize: UInt32
    /// The key ID: for a push message, the application server's ECDH public key (65 bytes).
    public let keyID: Data
    /// The record: ciphertext and tag.
    public let record: Data

    /// The largest body a push service takes (RFC 8030 §7.2: at least 4,096 bytes must be accepted; Apple's and
    /// Mozilla's take no more).
    public static let maximumBodySize = 4_096

    /// Reads a push message's body.
    ///
    /// - Throws: ``WebPushFailure/payloadTooLarge(_:)`` over ``maximumBodySize``; ``WebPushFailure/badEncryption(_:)``
    ///   for a header or record RFC 8188 and RFC 8291 do not allow.
    public init(body: Data) throws(WebPushFailure) {
        guard body.count <= Self.maximumBodySize else {
            throw .payloadTooLarge("the body is \(body.count) bytes; a push message is at most \(Self.maximumBodySize)")
        }
        let bytes = [UInt8](body)
        guard bytes.count >= 21 else { throw .badEncryption("the aes128gcm header is 21 bytes and a key ID at least") }
        let recordSize = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let idLength = Int(bytes[20])
        guard idLength == 65 else {
            throw .badEncryption("the key ID is \(idLength) bytes; RFC 8291 puts the sender's 65-byte public key there")
        }
        guard bytes.count >= 21 + idLength, bytes[21] == 4 else {
            throw .badEncryption("the key ID is not an uncompressed P-256 public key")
        }
        guard recordSize >= 18 else { throw .badEncryption("rs is \(recordSize); RFC 8188 needs at least 18") }
        let record = body.subdata(in: body.startIndex + 21 + idLength..<body.endIndex)
        guard record.count >= 17 else {
            throw .badEncryption("the record is \(record.count) bytes: a delimiter and a 16-byte tag at least")
        }
        guard record.count <= Int(recordSize) else {
            throw .badEncryption("the message is more than one record (RFC 8291: a push message is a single record)")
        }
        self.salt = Data(bytes[0..<16])
        self.recordSize = recordSize
        self.keyID = Data(bytes[21..<21 + idLength])
        self.record = record
    }
}
