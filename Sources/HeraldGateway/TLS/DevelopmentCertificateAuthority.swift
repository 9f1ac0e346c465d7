import Crypto
import Foundation
import HeraldCore
import SwiftASN1
import X509

/// The gateway's own certificate authority for development: made on first start in `<data-dir>/tls/`, it signs
/// the gateway's server certificate (for `localhost`, `127.0.0.1` and `::1`) and provider client certificates
/// for certificate-based connections (§3.2).
///
/// Providers trust `ca.pem` (`curl --cacert`, `SSL_CERT_FILE`, …) instead of Apple's roots (H-12).
public struct DevelopmentCertificateAuthority: Sendable {
    /// The folder holding the files.
    public let directory: URL
    /// The CA certificate providers trust.
    public var certificateURL: URL { directory.appendingPathComponent("ca.pem") }
    var privateKeyURL: URL { directory.appendingPathComponent("ca-key.pem") }
    /// The gateway's server certificate, signed by the CA.
    public var serverCertificateURL: URL { directory.appendingPathComponent("server.pem") }
    /// The server certificate's private key.
    public var serverPrivateKeyURL: URL { directory.appendingPathComponent("server-key.pem") }

    /// The server identity to listen with, client certificates checked against this CA.
    public var identityFiles: TLSIdentityFiles {
        TLSIdentityFiles(
            certificateChain: serverCertificateURL, privateKey: serverPrivateKeyURL,
            clientCertificateAuthority: certificateURL)
    }

    /// Loads the CA in `directory`, creating the CA and the server certificate if they are missing.
    ///
    /// - Parameters:
    ///   - directory: Usually `<data-dir>/tls`.
    ///   - now: The start of the certificates' validity.
    /// - Returns: The CA, and whether it was created now.
    public static func loadOrCreate(
        in directory: URL, now: Date = Date()
    ) throws -> (
        DevelopmentCertificateAuthority, created: Bool
    ) {
        let ca = DevelopmentCertificateAuthority(directory: directory)
        let fm = FileManager.default
        let existing = [ca.certificateURL, ca.privateKeyURL, ca.serverCertificateURL, ca.serverPrivateKeyURL]
        if existing.allSatisfy({ fm.fileExists(atPath: $0.path) }) { return (ca, false) }
        try fm.createDirectory(at: directory, withIntermediateDirectories: true)

        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            CommonName("Herald Development CA")
            OrganizationName("Herald")
        }
        let caCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 86400),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(caKey.publicKey))
            },
            issuerPrivateKey: .init(caKey))

        let serverKey = P256.Signing.PrivateKey()
        let serverCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(825 * 86400),
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                    .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
                ])
            },
            issuerPrivateKey: .init(caKey))

        try write(caKey.pemRepresentation, to: ca.privateKeyURL, privately: true)
        try write(serverKey.pemRepresentation, to: ca.serverPrivateKeyURL, privately: true)
        try write(try caCertificate.serializeAsPEM().pemString, to: ca.certificateURL, privately: false)
        try write(try serverCertificate.serializeAsPEM().pemString, to: ca.serverCertificateURL, privately: false)
        return (ca, true)
    }

    /// Issues a provider client certificate, shaped like Apple's "Apple Push Notification service SSL" ones:
    /// Common Name = bundle ID, topics in extension `1.2.840.113635.100.6.3.6`, environments in
    /// `…6.3.1` (development) and `…6.3.2` (production).
    ///
    /// - Parameters:
    ///   - bundleID: The app's bundle ID.
    ///   - topics: The topics it may push to (default: the bundle ID and its `.voip` and `.complication` topics).
    ///   - environments: The environments it is valid for.
    ///   - now: Start of validity; it lasts one year.
    /// - Returns: The certificate and its private key, PEM.
    public func issueClientCertificate(
        bundleID: String, topics: [String]? = nil, environments: Set<APNsEnvironment> = [.development, .production],
        now: Date = Date()
    ) throws -> (certificatePEM: String, privateKeyPEM: String) {
        let caKey = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: privateKeyURL, encoding: .utf8))
        let caCertificate = try Certificate(pemEncoded: String(contentsOf: certificateURL, encoding: .utf8))
        let key = P256.Signing.PrivateKey()
        let topics = topics ?? [bundleID, bundleID + ".voip", bundleID + ".complication"]
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
        }
        try extensions.append(
            Certificate.Extension(
                oid: APNsCertificateTopics.topicsOID, critical: false, value: ArraySlice(APNsCertificateTopics.encode(topics))))
        for environment in environments.sorted(by: { $0.rawValue < $1.rawValue }) {
            try extensions.append(
                Certificate.Extension(
                    oid: APNsCertificateTopics.oid(for: environment), critical: false, value: [0x05, 0x00]))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 86400),
            issuer: caCertificate.subject,
            subject: try DistinguishedName {
                CommonName(bundleID)
                OrganizationalUnitName("Herald")
            },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(caKey))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// Issues a server certificate for `hostNames` (DNS names), valid for 90 days — for the FCM proxy, which serves
    /// Google's hosts to SDKs that trust this CA.
    ///
    /// - Parameters:
    ///   - hostNames: The names it is for (its subject alternative names; the first is its common name).
    ///   - now: Start of validity.
    /// - Returns: The certificate and its private key, PEM.
    public func issueServerCertificate(
        hostNames: [String], now: Date = Date()
    ) throws -> (certificatePEM: String, privateKeyPEM: String) {
        let caKey = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: privateKeyURL, encoding: .utf8))
        let caCertificate = try Certificate(pemEncoded: String(contentsOf: certificateURL, encoding: .utf8))
        let key = P256.Signing.PrivateKey()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(90 * 86400),
            issuer: caCertificate.subject, subject: try DistinguishedName { CommonName(hostNames.first ?? "localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(hostNames.map { .dnsName($0) })
            },
            issuerPrivateKey: .init(caKey))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    private static func write(_ text: String, to url: URL, privately: Bool) throws {
        try Data(text.utf8).write(to: url, options: .atomic)
        if privately {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        }
    }
}

/// Reads and writes the APNs certificate extensions: the topic list and the environment markers.
enum APNsCertificateTopics {
    /// `1.2.840.113635.100.6.3.6`: the topics a certificate may push to.
    static let topicsOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 6]

    /// The marker extension of an environment: `…6.3.1` development, `…6.3.2` production.
    static func oid(for environment: APNsEnvironment) -> ASN1ObjectIdentifier {
        environment == .development ? [1, 2, 840, 113635, 100, 6, 3, 1] : [1, 2, 840, 113635, 100, 6, 3, 2]
    }

    /// Apple's layout: a SEQUENCE of (UTF8String topic, SEQUENCE { UTF8String kind }) pairs.
    static func encode(_ topics: [String]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            for topic in topics {
                try coder.serialize(ASN1UTF8String(topic))
                let kind = topic.hasSuffix(".voip") ? "voip" : topic.hasSuffix(".complication") ? "complication" : "app"
                try coder.appendConstructedNode(identifier: .sequence) { inner in
                    try inner.serialize(ASN1UTF8String(kind))
                }
            }
        }
        return serializer.serializedBytes
    }

    /// The topics a certificate lists; empty when it has no topics extension.
    static func topics(of certificate: Certificate) -> [String] {
        guard let value = certificate.extensions[oid: topicsOID]?.value,
            let root = try? DER.parse(Array(value)), case .constructed(let children) = root.content
        else { return [] }
        return children.compactMap { node in
            guard node.identifier == .utf8String, let text = try? ASN1UTF8String(derEncoded: node) else { return nil }
            return String(text)
        }
    }

    /// The environments a certificate is marked for; both when it has no marker (older certificates).
    static func environments(of certificate: Certificate) -> Set<APNsEnvironment> {
        let marked = Set(APNsEnvironment.allCases.filter { certificate.extensions[oid: oid(for: $0)] != nil })
        return marked.isEmpty ? Set(APNsEnvironment.allCases) : marked
    }
}
