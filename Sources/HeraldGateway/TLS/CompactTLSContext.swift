import CNIOBoringSSL
import Foundation

/// The device port's TLS settings: BoringSSL's `SSL_CTX` with the gateway's certificate chain and key, for
/// ``CompactTLSServerHandler``.
///
/// TLS 1.2 at least with Mozilla's intermediate suites (``TLSCipherSuites``), no session cache (TLS 1.3 resumes with stateless tickets; a cache would hold a session for
/// every device that ever connected), ALPN `http/1.1` when the client offers it (the port speaks nothing else; a
/// client that offers only other protocols gets no ALPN answer, as RFC 7301 §3.2 allows, and goes on as it can).
/// BoringSSL is swift-nio-ssl's copy (`CNIOBoringSSL`, reached through NIOSSL), pinned by `Package.resolved`.
final class CompactTLSContext: @unchecked Sendable {
    // @unchecked: an SSL_CTX is safe to share between threads once configured, and this one is never changed after
    // `init` (BoringSSL's documented rule for SSL_CTX).
    let context: OpaquePointer

    /// The one ALPN protocol the device port answers.
    static let http1 = "http/1.1"

    /// Loads the certificate chain and private key from PEM files.
    ///
    /// - Parameter identity: The gateway's TLS identity; its client CA is not used (devices present no certificate).
    /// - Throws: ``CompactTLSError`` when a file cannot be read or the key does not match the certificate.
    init(identity: TLSIdentityFiles) throws {
        guard let context = SSL_CTX_new(TLS_method()) else { throw CompactTLSError.fromQueue("SSL_CTX_new") }
        self.context = context
        ERR_clear_error()
        guard SSL_CTX_set_min_proto_version(context, UInt16(TLS1_2_VERSION)) == 1 else {
            throw CompactTLSError.fromQueue("setting TLS 1.2 as the minimum")
        }
        guard SSL_CTX_set_strict_cipher_list(context, TLSCipherSuites.intermediate) == 1 else {
            throw CompactTLSError.fromQueue("setting the TLS 1.2 cipher suites")
        }
        _ = SSL_CTX_set_session_cache_mode(context, Int32(SSL_SESS_CACHE_OFF))
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, offered, offeredLength, _ in
                guard let out, let outLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
                // The client's list: each name after its length byte.
                var index = 0
                let count = Int(offeredLength)
                while index < count {
                    let length = Int(offered[index])
                    let name = offered + index + 1
                    if index + 1 + length <= count,
                        UnsafeBufferPointer(start: name, count: length).elementsEqual(CompactTLSContext.http1.utf8)
                    {
                        out.pointee = name
                        outLength.pointee = UInt8(length)
                        return SSL_TLSEXT_ERR_OK
                    }
                    index += 1 + length
                }
                return SSL_TLSEXT_ERR_NOACK
            }, nil)
        guard SSL_CTX_use_certificate_chain_file(context, identity.certificateChain.path) == 1 else {
            throw CompactTLSError.fromQueue("reading the certificate chain \(identity.certificateChain.path)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, identity.privateKey.path, SSL_FILETYPE_PEM) == 1 else {
            throw CompactTLSError.fromQueue("reading the private key \(identity.privateKey.path)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw CompactTLSError.fromQueue("the private key \(identity.privateKey.path) does not match the certificate")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }
}

/// Why the device port's TLS failed: BoringSSL's reason, as its error queue names it.
struct CompactTLSError: Error, CustomStringConvertible, Equatable {
    /// What failed and why.
    let description: String

    /// An error for `step` with the reasons on this thread's BoringSSL error queue, which it empties.
    static func fromQueue(_ step: String) -> CompactTLSError {
        var reasons: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return CompactTLSError(description: reasons.isEmpty ? step : "\(step): \(reasons.joined(separator: "; "))")
    }
}
