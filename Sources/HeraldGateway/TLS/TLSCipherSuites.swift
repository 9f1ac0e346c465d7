/// The TLS 1.2 cipher suites every TLS port of the gateway offers: Mozilla's "intermediate" profile (ECDHE with
/// AES-GCM or ChaCha20-Poly1305; no CBC, no SHA-1 MAC, no static RSA), less the DHE suites BoringSSL does not have.
/// TLS 1.3's suites are BoringSSL's fixed three, all AEAD.
enum TLSCipherSuites {
    /// The suites, in OpenSSL's cipher-list syntax, in Mozilla's order.
    static let intermediate = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")
}
