import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
///
/// `postgresql://` is accepted too. Without a port, 5432; without `sslmode`, `prefer` (TLS when the server offers
/// it), as libpq does.
public struct PostgresDatabaseURL: Sendable, CustomStringConvertible {
    /// TLS to the server, as libpq's `sslmode`.
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// What is wrong with a database URL, in words that say what to write instead.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// Parses `string`.
    ///
    /// - Parameter string: A `postgres://` URL.
    /// - Throws: ``Invalid`` with what is wrong.
    public init(_ string: String) throws {
        let form = "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme.lowercased())
        else { throw Invalid(description: "\(string) is not a PostgreSQL URL: write \(form)") }
        guard let host = components.host, !host.isEmpty else {
            throw Invalid(description: "\(string) names no host: write \(form)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw Invalid(description: "\(string) names no user: write \(form)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw Invalid(description: "\(string) names no database: write \(form)") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw Invalid(description: "\(string): unknown parameter \(item.name) (only sslmode is read)")
            }
            guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                throw Invalid(description: "\(string): sslmode is disable, prefer or require")
            }
            tls = mode
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.tls = tls
    }

    /// The URL without its password, for logs and messages.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)" + (tls == .prefer ? "" : "?sslmode=\(tls.rawValue)")
    }

    /// The pooled client's configuration.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    /// A single connection's configuration (the listener's, which pools cannot lend for long).
    package func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        return PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
    }
}
