import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Why a connection to a server failed, in words a person acts on: no framework type names, no build paths
/// (BoringSSL's errors carry the source file they were raised in).
enum ConnectionFailure {
    /// The text for the failure `error` says, as one line.
    ///
    /// - Parameter error: What connecting, the TLS handshake or the connection threw.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first { return describe(failure.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil {
                return "the host name does not resolve (no address for \(error.host))"
            }
            return "no address to connect to for \(error.host)"
        case let error as IOError:
            return describe(errno: error.errnoCode)
        case ChannelError.connectTimeout:
            return "the connection timed out: nothing answers at that address"
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "the server's TLS certificate is not for this host name"
        case let error as NIOSSLError:
            return describe(tls: String(describing: error))
        case let error as BoringSSLError:
            return describe(tls: String(describing: error))
        default:
            return "\(error)"
        }
    }

    private static func describe(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: "connection refused: nothing listens at that address (is the gateway running? is the port right?)"
        case ETIMEDOUT: "the connection timed out: nothing answers at that address"
        case EHOSTUNREACH, ENETUNREACH: "the host is unreachable from here"
        case ECONNRESET: "the server reset the connection"
        default: String(cString: strerror(code)).lowercased()
        }
    }

    /// A TLS failure by BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`, …), without the file it was raised in.
    private static func describe(tls text: String) -> String {
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return "the server's TLS certificate is not trusted (certificate verify failed)"
        }
        // BoringSSL's "error:<code>:<library>:<function>:<REASON> at <file>:<line>": the reason alone.
        let reasons = text.split(separator: " ").compactMap { word -> Substring? in
            let parts = word.split(separator: ":")
            guard parts.count >= 5, parts[0].hasSuffix("error") else { return nil }
            return parts[4]
        }
        if let reason = reasons.first {
            return "the TLS handshake failed (\(reason.lowercased().replacingOccurrences(of: "_", with: " ")))"
        }
        if text.contains("unexpectedEOF") || text.contains("uncleanShutdown") {
            return "the server closed the connection during the TLS handshake (does it speak TLS on that port?)"
        }
        return "the TLS handshake failed"
    }
}
