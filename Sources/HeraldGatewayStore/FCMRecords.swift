import Foundation

/// A Firebase project whose Cloud Messaging API the gateway serves: its service account (the public half of the key)
/// and the APNs key and apps it sends to.
public struct FCMProjectRecord: Sendable, Equatable {
    /// The project ID (`projects/<id>` in the API's paths).
    public var projectID: String
    /// The service account's email: the `iss` of its token requests.
    public var clientEmail: String
    /// The service account's numeric client ID.
    public var clientID: String
    /// The key's ID: the `kid` of its token requests.
    public var privateKeyID: String
    /// The service account's public key, PEM.
    public var publicKeyPEM: String
    /// The APNs provider key FCM sends the project's messages with (as FCM uses the `.p8` key uploaded to a project).
    public var providerKeyID: String
    /// The iOS apps registered in the project, by bundle ID.
    public var bundleIDs: [String]
    /// When the project was made.
    public var createdAt: Date

    package init(
        projectID: String, clientEmail: String, clientID: String, privateKeyID: String, publicKeyPEM: String,
        providerKeyID: String, bundleIDs: [String], createdAt: Date
    ) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.clientID = clientID
        self.privateKeyID = privateKeyID
        self.publicKeyPEM = publicKeyPEM
        self.providerKeyID = providerKeyID
        self.bundleIDs = bundleIDs
        self.createdAt = createdAt
    }

    /// `existing` with `added` after it, each bundle ID once, in the order first named.
    static func adding(_ added: [String], to existing: [String]) -> [String] {
        var seen = Set<String>()
        return (existing + added).filter { seen.insert($0).inserted }
    }
}

/// An OAuth 2 access token the token endpoint issued for a project, kept by its SHA-256 only.
public struct FCMAccessTokenRecord: Sendable, Equatable {
    /// The token's SHA-256, lowercase hex.
    public var hash: String
    /// The project whose service account asked for it.
    public var projectID: String
    /// When it stops being accepted (Google's tokens last an hour).
    public var expiresAt: Date

    package init(hash: String, projectID: String, expiresAt: Date) {
        self.hash = hash
        self.projectID = projectID
        self.expiresAt = expiresAt
    }
}

/// An app installation's FCM registration token, tied to its APNs device token: when the APNs token is revoked, so is
/// this one; a reinstalled app gets a new APNs token and with it a new registration.
public struct FCMRegistrationRecord: Sendable, Equatable {
    /// The registration token (`<installation ID>:<opaque>`).
    public var token: String
    /// The Firebase installation ID (the `fid` target).
    public var installationID: String
    /// The project the app is registered in.
    public var projectID: String
    /// The APNs device token the registration sends to (lowercase hex).
    public var apnsToken: String
    /// When it was issued.
    public var createdAt: Date

    package init(token: String, installationID: String, projectID: String, apnsToken: String, createdAt: Date) {
        self.token = token
        self.installationID = installationID
        self.projectID = projectID
        self.apnsToken = apnsToken
        self.createdAt = createdAt
    }
}
