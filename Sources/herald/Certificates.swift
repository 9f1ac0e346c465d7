import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway

extension HeraldCommand {
    /// Issues provider client certificates (certificate-based authentication, APNs §3.2).
    struct Certificates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue provider TLS client certificates, as Apple's push certificates, from the gateway's CA.",
            subcommands: [Create.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Write a client certificate and its private key (one PEM file) for an app.",
                discussion: """
                    Shaped like Apple's "Apple Push Notification service SSL" certificates: Common Name = bundle ID, \
                    topics in extension 1.2.840.113635.100.6.3.6, valid for one year. Issued by the development CA \
                    in <data-dir>/tls, which `herald gateway` trusts for client certificates unless it was started \
                    with --client-ca. Use it as curl --cert FILE, or as the cert and key of node-apn, aioapns or \
                    `herald push`. A gateway started with it needs no restart.
                    """)
            @OptionGroup var data: DataDirectoryOptions
            @Option(help: "The app's bundle ID (the certificate's Common Name and default topic).") var bundleId: String
            @Option(
                name: .customLong("topic"),
                help: "A topic it may push to; repeat for several (default: the bundle ID, its .voip and .complication topics)."
            )
            var topics: [String] = []
            @Option(help: "development, production or both (Apple's certificates today are both).")
            var environment: Environments = .both
            @Option(help: "Where to write the PEM file (certificate, then private key).") var out: String

            enum Environments: String, ExpressibleByArgument, CaseIterable {
                case development, production, both

                var set: Set<APNsEnvironment> {
                    switch self {
                    case .development: [.development]
                    case .production: [.production]
                    case .both: [.development, .production]
                    }
                }
            }

            func validate() throws {
                try requireBundleID(bundleId, option: "--bundle-id")
                for topic in topics where !APNsRequestHeaders.isValidTopic(topic) {
                    throw ValidationError("--topic \(topic) is not a topic: a bundle ID, optionally with a suffix such as .voip.")
                }
            }

            func run() async throws {
                let directory = data.directory
                let authority: DevelopmentCertificateAuthority
                do {
                    try directory.create()
                    authority = try DevelopmentCertificateAuthority.loadOrCreate(in: directory.tlsDirectory).0
                } catch {
                    throw ValidationError(
                        "Cannot open the CA in \(directory.tlsDirectory.path): \(error). Pass a writable --data-dir.")
                }
                let issued = try authority.issueClientCertificate(
                    bundleID: bundleId, topics: topics.isEmpty ? nil : topics, environments: environment.set)
                let file = URL(fileURLWithPath: out)
                do {
                    let pem = [issued.certificatePEM, issued.privateKeyPEM].map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined()
                    try Data(pem.utf8).write(to: file, options: .withoutOverwriting)
                    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
                } catch {
                    throw ValidationError("Cannot write \(out): \(error). Choose a path that does not exist yet.")
                }
                print(
                    "Wrote \(file.path): client certificate for \(bundleId) (\(environment.rawValue)), issued by \(authority.certificateURL.path)"
                )
            }
        }
    }
}
