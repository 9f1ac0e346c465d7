import Foundation

/// How a provider proves who it is (APNs §3).
public enum APNsAuthentication: Sendable {
    /// A provider token (JWT) on every request, from a `.p8` key.
    case token(ProviderTokenSigner)
    /// A TLS client certificate: the certificate chain and its private key, PEM (one file may hold both).
    case certificate(certificatePEM: String, privateKeyPEM: String)
}
