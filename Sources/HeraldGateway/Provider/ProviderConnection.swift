import Foundation
import HeraldCore
import HeraldFaults
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// What the gateway remembers about one provider connection: how it authenticates and what it is bound to.
final class ProviderConnection: Sendable {
    /// How the connection authenticates.
    enum Identity: Sendable, Equatable {
        /// No client certificate: token-based (§3.1).
        case token
        /// A client certificate with these topics and environments (§3.2); `topics` empty = not an APNs certificate.
        case certificate(commonName: String, topics: [String], environments: Set<APNsEnvironment>)

        /// The identity a client certificate gives (none: token authentication).
        ///
        /// - Parameter certificate: The certificate the client presented in the TLS handshake, if any.
        init(certificate: NIOSSLCertificate?) {
            guard let certificate else {
                self = .token
                return
            }
            guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
                self = .certificate(commonName: "", topics: [], environments: [])
                return
            }
            self = .certificate(
                commonName: parsed.subject.description, topics: APNsCertificateTopics.topics(of: parsed),
                environments: APNsCertificateTopics.environments(of: parsed))
        }
    }

    struct State {
        /// Decided when the TLS handshake completes, before any request (plaintext connections: by token).
        var identity: Identity = .token
        /// The team the first accepted push bound the connection to.
        var boundTeamID: String?
        /// The token in use and when the connection first saw it.
        var currentToken: String?
        var currentTokenSince: Date?
        var currentTokenIssuedAt: Date?
        var currentKeyID: String?
    }

    /// Whether the connection came in over TLS.
    let usesTLS: Bool
    /// The environment of the listener it came in on.
    let environment: APNsEnvironment
    /// The API of the listener it came in on.
    let api: GatewayConfiguration.ProviderListener.API
    /// For the push an FCM message maps to: the message's name (its delivery log says it came by FCM).
    let fcmMessage: String?
    /// Which fault rules its pushes are asked of (docs/faults.md).
    let faults: FaultAsking
    /// A number no other connection of this process has: what a quota kept per connection counts by.
    let serial: UInt64
    let state = Mutex(State())

    /// Which fault rules a connection's pushes are asked of.
    enum FaultAsking: Sendable {
        /// The APNs door's, each push as it comes.
        case apns
        /// The FCM door's, with what the FCM message offers their matches (one push of a message to a token).
        case fcm(FaultRequest)
        /// None: the door asked them once already (a topic message's pushes).
        case none
    }

    private static let serials = Atomic<UInt64>(0)

    init(
        usesTLS: Bool, environment: APNsEnvironment, api: GatewayConfiguration.ProviderListener.API = .provider,
        fcmMessage: String? = nil, faults: FaultAsking = .apns
    ) {
        self.usesTLS = usesTLS
        self.environment = environment
        self.api = api
        self.fcmMessage = fcmMessage
        self.faults = faults
        self.serial = Self.serials.add(1, ordering: .relaxed).newValue
    }

    /// How the connection authenticates.
    var identity: Identity { state.withLock { $0.identity } }
}

/// Provider connections by their channel, so a request on any stream finds its connection's state.
final class ProviderConnectionRegistry: Sendable {
    private let connections = Mutex<[ObjectIdentifier: ProviderConnection]>([:])

    func register(_ connection: ProviderConnection, for id: ObjectIdentifier) {
        connections.withLock { $0[id] = connection }
    }

    func remove(_ id: ObjectIdentifier) {
        connections.withLock { $0[id] = nil }
    }

    func connection(_ id: ObjectIdentifier) -> ProviderConnection? {
        connections.withLock { $0[id] }
    }

    /// How many provider connections are open.
    var count: Int { connections.withLock { $0.count } }
}
