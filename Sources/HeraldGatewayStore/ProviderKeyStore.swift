import Foundation
import HeraldCore

/// The providers' signing keys (token-based authentication): the public half of each `.p8` key, by key ID.
public protocol ProviderKeyStore: Sendable {
    /// The provider key with this key ID.
    func providerKey(id: String) async throws -> ProviderKeyRecord?
    /// Registers or replaces a provider key.
    func saveProviderKey(_ key: ProviderKeyRecord) async throws
    /// Every registered provider key.
    func providerKeys() async throws -> [ProviderKeyRecord]
}
