import CTLS

/// The client side of TLS connections Sluice opens itself (to an `https://` parent proxy):
/// TLS 1.2 and 1.3, the peer's certificate verified against the system store or a PEM file of
/// CA certificates, and its name checked (a DNS name, or an IP literal against its IP entries).
/// - SeeAlso: `SSL_CTX_set_verify(3)`, `SSL_set1_host(3)`, `X509_VERIFY_PARAM_set1_ip_asc(3)`.
public final class TLSClientContext {
    let context: OpaquePointer

    /// `caFile`: PEM CA certificates trusted instead of the system store (`nil`: the system store).
    public init(caFile: String? = nil) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError("create the TLS context") }
        self.context = context
        guard ctls_ctx_set_min_version(context, TLS1_2_VERSION) == 1,
            ctls_ctx_set_max_version(context, TLS1_3_VERSION) == 1
        else { throw TLSError("configure the TLS context") }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw TLSError("read the CA certificates in \(caFile)")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw TLSError("read the system's CA certificates")
        }
    }

    deinit { SSL_CTX_free(context) }

    /// A client session for a connection to `host` (a name, or an IP literal without brackets):
    /// SNI names it (unless it is an address) and the certificate must be valid for it.
    public func makeSession(host: String) throws(TLSError) -> TLSSession {
        guard let ssl = SSL_new(context) else { throw TLSError("create a TLS session") }
        let named: Bool
        if LeafMinter.isIPLiteral(host) {
            named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
        } else {
            named = ctls_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1
        }
        guard named else {
            SSL_free(ssl)
            throw TLSError("name the server \(host)")
        }
        return try TLSSession(ssl: ssl, role: .client)
    }
}
