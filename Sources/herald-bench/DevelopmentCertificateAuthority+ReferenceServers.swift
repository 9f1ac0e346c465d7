import Foundation
import HeraldGateway
import NIOSSL

extension DevelopmentCertificateAuthority {
    /// Server TLS with the gateway's certificate and ALPN `h2`, for the benchmarks' reference servers.
    func referenceServerTLS() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(serverCertificateURL.path).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: serverPrivateKeyURL.path, format: .pem)))
        tls.applicationProtocols = ["h2"]
        return tls
    }
}
