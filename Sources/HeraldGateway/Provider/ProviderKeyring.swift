import Crypto
import Foundation
import HeraldCore
import Synchronization

/// Provider public keys by key ID, read from the store and cached briefly so a key registered or replaced by
/// `herald keys` while the gateway runs counts within seconds — and a new key ID at once.
final class ProviderKeyring: Sendable {
    struct Entry: Sendable {
        let record: ProviderKeyRecord
        let publicKey: P256.Signing.PublicKey
        let loadedAt: Date
    }

    private let store: any ProviderKeyStore
    private let clock: any HeraldClock
    private let cache = Mutex<[String: Entry]>([:])
    /// How long a cached key is trusted before it is read again.
    static let cacheLifetime: TimeInterval = 5

    init(store: any ProviderKeyStore, clock: any HeraldClock) {
        self.store = store
        self.clock = clock
    }

    /// The key registered under `keyID`, or `nil` when there is none (or its PEM is unreadable).
    ///
    /// - Parameter reload: Read the store even if a cached entry is fresh (after a signature failure).
    func key(_ keyID: String, reload: Bool = false) async throws -> Entry? {
        let now = clock.now
        if !reload, let entry = cachedKey(keyID, now: now) { return entry }
        guard let record = try await store.providerKey(id: keyID),
            let publicKey = try? P256.Signing.PublicKey(pemRepresentation: record.publicKeyPEM)
        else {
            cache.withLock { $0[keyID] = nil }
            return nil
        }
        let entry = Entry(record: record, publicKey: publicKey, loadedAt: now)
        cache.withLock { $0[keyID] = entry }
        return entry
    }

    /// The key registered under `keyID` if it was read within ``cacheLifetime``, without reading the store.
    ///
    /// - Parameter now: The clock's time (by default, read now).
    func cachedKey(_ keyID: String, now: Date? = nil) -> Entry? {
        let now = now ?? clock.now
        guard let entry = cache.withLock({ $0[keyID] }), now.timeIntervalSince(entry.loadedAt) < Self.cacheLifetime else {
            return nil
        }
        return entry
    }
}
