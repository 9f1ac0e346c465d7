import Foundation
import NIOCore
import NIOSSL

/// Where notifications go: Apple's two environments, or a Herald gateway.
public struct APNsServer: Sendable, Hashable {
    /// `https://host:port`.
    public var url: URL
    /// PEM file of the CA to trust instead of the system's (a Herald gateway's `tls/ca.pem`).
    public var certificateAuthorityFile: String?

    /// Creates a server address.
    ///
    /// - Parameters:
    ///   - url: The base URL, e.g. `https://localhost:2197`; `http://` speaks HTTP/2 without TLS (prior
    ///     knowledge) to a gateway's plaintext listener.
    ///   - certificateAuthorityFile: A PEM CA to trust, for a gateway with its own CA.
    public init(url: URL, certificateAuthorityFile: String? = nil) {
        self.url = url
        self.certificateAuthorityFile = certificateAuthorityFile
    }

    /// Apple's production environment, `api.push.apple.com:443` (H-01).
    public static let production = APNsServer(url: URL(string: "https://api.push.apple.com")!)
    /// Apple's development (sandbox) environment, `api.sandbox.push.apple.com:443` (H-01).
    public static let development = APNsServer(url: URL(string: "https://api.sandbox.push.apple.com")!)
}

extension APNsServer {
    /// The TLS a client uses with this server: trusting its CA file (else the system's), presenting the certificate
    /// when the authentication is one.
    ///
    /// - Throws: When the CA file, the certificate or its key cannot be read.
    func tlsConfiguration(authentication: APNsAuthentication) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = certificateAuthorityFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        if case .certificate(let certificatePEM, let privateKeyPEM) = authentication {
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
        }
        return tls
    }
}
