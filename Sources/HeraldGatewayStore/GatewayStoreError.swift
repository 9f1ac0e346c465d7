/// Why the gateway's store could not do what was asked.
public enum GatewayStoreError: Error, Equatable, CustomStringConvertible {
    /// The database could not be reached when the store started.
    case unreachable(String, reason: String)
    /// The database is away or does not answer now; a provider is answered 503 `ServiceUnavailable` and retries.
    case unavailable(String)
    /// The database's schema is newer than this build knows: a newer Herald migrated it.
    case newerSchema(found: Int, known: Int)
    /// The device has this many active tokens, the most one may have: a new one is not issued.
    case tokenQuota(limit: Int)

    public var description: String {
        switch self {
        case .unreachable(let database, let reason):
            "Cannot reach the database \(database): \(reason). Check that PostgreSQL runs there and the URL is right."
        case .unavailable(let reason):
            "The database is unavailable: \(reason)"
        case .newerSchema(let found, let known):
            "The database has schema version \(found), newer than this Herald knows (\(known)): run the Herald that "
                + "migrated it, or a newer one."
        case .tokenQuota(let limit):
            "This device has \(limit) active tokens, the most a device may have: unregister one first."
        }
    }
}
