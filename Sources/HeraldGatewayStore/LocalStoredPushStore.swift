import Foundation
import HeraldCore

/// A store one node owns (SQLite) that can keep an offline device's notification for a caller that is not a task —
/// a provider request answered on its event loop — with the tokens it has seen known without asking the database.
public protocol LocalStoredPushStore: Sendable {
    /// The token's record as this process last read or wrote it, without asking the database; `nil` when it has not
    /// seen it. A token's device, app, environment and purpose never change, but another process sharing the file
    /// (`herald tokens revoke`) may have revoked it since: ``keepIfTokenActive(_:completion:)`` checks that in its own
    /// transaction.
    func knownToken(_ token: String) -> DeviceTokenRecord?

    /// Keeps `notification` for its offline device, replacing the one kept for the same token and topic, if its token
    /// is still active — checked in the same transaction — and calls `completion` once that is durable: on the store's
    /// thread, with `.stored(replacing:)`, `.revoked(at:)` or `.unknownToken` (never `.relayed`), or the error; it
    /// should only hand the outcome on.
    func keepIfTokenActive(
        _ notification: StoredNotification, completion: @escaping @Sendable (Result<SharedDelivery, any Error>) -> Void)
}
