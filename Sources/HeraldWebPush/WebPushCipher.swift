import Crypto
import Foundation

/// RFC 8291's message encryption: what an application server does to a push (``encrypt(_:for:)``) and what the user
/// agent does to read it (``decrypt(_:with:)``).
public enum WebPushCipher {
    /// A user agent's keys for one subscription: its ECDH key pair and its authentication secret
    /// (`PushSubscription.getKey("p256dh")` and `getKey("auth")` on the public side).
    public struct UserAgentKeys: Sendable {
        /// The ECDH private key.
        public let privateKey: P256.KeyAgreement.PrivateKey
        /// The 16-byte authentication secret.
        public let authSecret: Data

        /// New keys, as a user agent makes for a subscription.
        public init() {
            self.privateKey = P256.KeyAgreement.PrivateKey()
            var secret = SystemRandomNumberGenerator()
            self.authSecret = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &secret) })
        }

        /// Keys kept before.
        public init(privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) {
            self.privateKey = privateKey
            self.authSecret = authSecret
        }

        /// Keys kept before as bytes: the private key's raw scalar (``rawPrivateKey``) and the secret.
        ///
        /// - Throws: When `rawPrivateKey` is not a P-256 private key.
        public init(rawPrivateKey: Data, authSecret: Data) throws {
            self.init(privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: rawPrivateKey), authSecret: authSecret)
        }

        /// The private key's raw scalar, 32 bytes, as a store keeps it.
        public var rawPrivateKey: Data { privateKey.rawRepresentation }

        /// The public side an application server encrypts to.
        public var subscription: SubscriptionKeys {
            SubscriptionKeys(p256dh: privateKey.publicKey.x963Representation, auth: authSecret)
        }
    }

    /// A subscription's public keys, as `PushSubscription.toJSON()` gives them (`keys.p256dh`, `keys.auth`).
    public struct SubscriptionKeys: Sendable, Hashable {
        /// The user agent's ECDH public key, 65 bytes uncompressed.
        public let p256dh: Data
        /// The authentication secret, 16 bytes.
        public let auth: Data

        public init(p256dh: Data, auth: Data) {
            self.p256dh = p256dh
            self.auth = auth
        }
    }

    /// Why a message could not be read.
    public struct Unreadable: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Encrypts `plaintext` to a subscription: an `aes128gcm` body of one record.
    ///
    /// - Parameters:
    ///   - plaintext: The message (at most 3,993 bytes, so that the body fits in 4,096).
    ///   - keys: The subscription's keys.
    /// - Throws: `CryptoKitError` for keys that are not P-256.
    public static func encrypt(_ plaintext: Data, for keys: SubscriptionKeys) throws -> Data {
        let sender = P256.KeyAgreement.PrivateKey()
        let receiver = try P256.KeyAgreement.PublicKey(x963Representation: keys.p256dh)
        var random = SystemRandomNumberGenerator()
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        let (key, nonce) = try derive(
            sharedSecret: try sender.sharedSecretFromKeyAgreement(with: receiver), auth: keys.auth,
            receiverPublic: keys.p256dh, senderPublic: sender.publicKey.x963Representation, salt: salt)
        let sealed = try AES.GCM.seal(plaintext + [2], using: key, nonce: nonce)
        let recordSize = UInt32(4_096)
        var body = salt
        body.append(contentsOf: withUnsafeBytes(of: recordSize.bigEndian) { Array($0) })
        body.append(65)
        body.append(sender.publicKey.x963Representation)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }

    /// Decrypts a push message's body with the user agent's keys.
    ///
    /// - Throws: ``WebPushFailure`` for a body that is not framed right; ``Unreadable`` for one the keys do not open
    ///   or whose padding is wrong.
    public static func decrypt(_ body: Data, with keys: UserAgentKeys) throws -> Data {
        let framing = try AES128GCMFraming(body: body)
        guard let sender = try? P256.KeyAgreement.PublicKey(x963Representation: framing.keyID) else {
            throw Unreadable(description: "the key ID is not a P-256 public key")
        }
        let shared: SharedSecret
        do {
            shared = try keys.privateKey.sharedSecretFromKeyAgreement(with: sender)
        } catch {
            throw Unreadable(description: "no shared secret with the sender's key: \(error)")
        }
        let (key, nonce) = try derive(
            sharedSecret: shared, auth: keys.authSecret, receiverPublic: keys.privateKey.publicKey.x963Representation,
            senderPublic: framing.keyID, salt: framing.salt)
        let record = framing.record
        let padded: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: nonce, ciphertext: record.prefix(record.count - 16), tag: record.suffix(16))
            padded = try AES.GCM.open(box, using: key)
        } catch {
            throw Unreadable(description: "the record does not open with this subscription's keys")
        }
        // The last record ends with 0x02, then any number of zeros (RFC 8188 §2).
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 2 else {
            throw Unreadable(description: "the record's padding has no final delimiter (0x02)")
        }
        return padded.prefix(upTo: delimiter)
    }

    /// The content-encryption key and nonce (RFC 8291 §3.4, then RFC 8188 §2.2–2.3).
    private static func derive(
        sharedSecret: SharedSecret, auth: Data, receiverPublic: Data, senderPublic: Data, salt: Data
    ) throws -> (SymmetricKey, AES.GCM.Nonce) {
        let ecdh = sharedSecret.withUnsafeBytes { Data($0) }
        let keyInfo = Data("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let prkKey = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: ecdh), salt: auth)
        let ikm = HKDF<SHA256>.expand(pseudoRandomKey: prkKey, info: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return (cek, try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }))
    }
}
