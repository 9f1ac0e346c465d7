import Crypto
import Foundation
import HeraldCore
import Synchronization

/// Makes provider tokens (ES256 JWTs, APNs §3.1) and reuses each until it is due for renewal.
///
/// APNs refuses tokens older than an hour (`ExpiredProviderToken`) and new tokens more often than every 20 minutes
/// on a connection (`TooManyProviderTokenUpdates`), so a token is renewed after ``refreshInterval`` — between 20 and
/// 60 minutes, 50 by default.
public final class ProviderTokenSigner: Sendable {
    /// The key's ID (`kid`).
    public let keyID: String
    /// The team's ID (`iss`).
    public let teamID: String
    /// How old a token gets before a new one is made.
    public let refreshInterval: Duration
    private let privateKey: P256.Signing.PrivateKey
    private let clock: any HeraldClock
    private let current = Mutex<(token: String, issuedAt: Date)?>(nil)

    /// The shortest and longest renewal intervals APNs allows.
    public static let allowedRefreshIntervals: ClosedRange<Duration> = .seconds(20 * 60) ... .seconds(59 * 60)

    /// Creates a signer from a PKCS#8 PEM key (the contents of Apple's `AuthKey_<KEYID>.p8`).
    ///
    /// - Parameters:
    ///   - pem: The key, PEM.
    ///   - keyID: The key ID Apple shows for it.
    ///   - teamID: The developer team ID.
    ///   - refreshInterval: Token age at which a new one is made; clamped to 20…59 minutes.
    ///   - clock: The time source (a virtual clock in tests).
    public init(
        pem: String, keyID: String, teamID: String, refreshInterval: Duration = .seconds(50 * 60),
        clock: any HeraldClock = SystemClock()
    ) throws {
        // Blank lines around the PEM block are not part of it (openssl reads such a file too).
        self.privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem.trimmingCharacters(in: .whitespacesAndNewlines))
        self.keyID = keyID
        self.teamID = teamID
        self.refreshInterval = min(
            max(refreshInterval, Self.allowedRefreshIntervals.lowerBound), Self.allowedRefreshIntervals.upperBound)
        self.clock = clock
    }

    /// The token to send now: the cached one, or a new one when the cached one is due for renewal.
    ///
    /// The time is read under the lock: a caller that read it earlier but got the lock later would otherwise see a
    /// token "from the future" and sign another, and a connection whose first request carried the other token
    /// answers every later one `TooManyProviderTokenUpdates`. A clock that steps back keeps the cached token.
    public func token() throws -> String {
        try current.withLock { current in
            let now = clock.now
            if let cached = current, now.timeIntervalSince(cached.issuedAt) < refreshInterval.timeInterval {
                return cached.token
            }
            let token = try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: now, privateKey: privateKey)
            current = (token, now)
            return token
        }
    }

    /// Drops `rejected` when it is still the token in use, so that the next ``token()`` signs a new one — after APNs
    /// answered `ExpiredProviderToken` for it.
    ///
    /// - Parameter rejected: The token APNs refused.
    /// - Returns: Whether it was dropped; `false` when a newer one replaced it already.
    @discardableResult
    func renew(replacing rejected: String) -> Bool {
        current.withLock { current in
            guard current?.token == rejected else { return false }
            current = nil
            return true
        }
    }
}
