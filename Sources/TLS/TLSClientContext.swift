import CTLS

/// The client side of TLS connections Sluice opens itself (to an `https://` parent proxy):
/// TLS 1.2 and 1.3, the peer's certificate verified against the system store or a PEM file of
/// CA certificates, and its name checked (a DNS name, or an IP literal against its IP entries).
/// The last session each server sent is kept and offered on the next connection to it
/// (resumption: no certificate exchange, no full key agreement). Loop-confined.
/// - SeeAlso: `SSL_CTX_set_verify(3)`, `SSL_set1_host(3)`, `SSL_CTX_sess_set_new_cb(3)`.
public final class TLSClientContext {
    let context: OpaquePointer
    /// The last session per server name (each holds a reference).
    private var sessions: [String: OpaquePointer] = [:]

    /// Whether certificates are verified (`false` only where a rule says `verify: false`).
    public let verifies: Bool

    /// - Parameters:
    ///   - caFile: PEM CA certificates trusted instead of the system store (`nil`: the system store).
    ///   - verify: check the chain and the name (`false`: accept any certificate).
    ///   - tls13Only: offer TLS 1.3 only (a rule's `min_version: "1.3"`).
    ///   - certificate: a PEM file with the client certificate (and its chain) sent to servers
    ///     that ask for one (mutual TLS); `key`: the PEM file of its private key (`nil`: in
    ///     `certificate`'s file).
    public init(
        caFile: String? = nil, verify: Bool = true, tls13Only: Bool = false, certificate: String? = nil,
        key: String? = nil
    ) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError("create the TLS context") }
        self.context = context
        verifies = verify
        guard ctls_ctx_set_min_version(context, tls13Only ? TLS1_3_VERSION : TLS1_2_VERSION) == 1,
            ctls_ctx_set_max_version(context, TLS1_3_VERSION) == 1
        else { throw TLSError("configure the TLS context") }
        SSL_CTX_set_verify(context, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw TLSError("read the CA certificates in \(caFile)")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw TLSError("read the system's CA certificates")
        }
        if let certificate {
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw TLSError("read the client certificate in \(certificate)")
            }
            guard SSL_CTX_use_PrivateKey_file(context, key ?? certificate, SSL_FILETYPE_PEM) == 1 else {
                throw TLSError("read the client certificate's key in \(key ?? certificate)")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw TLSError("the key in \(key ?? certificate) is not the client certificate's")
            }
        }
        // Sessions are kept here, per server name, not in OpenSSL's internal store.
        _ = ctls_ctx_set_session_cache_mode(
            context, Int(SSL_SESS_CACHE_CLIENT) | Int(SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SSL_CTX_sess_set_new_cb(context) { ssl, session in
            guard let ssl, let session, let owner = ctls_get_ex_data(ssl) else { return 0 }
            // 1: the reference is ours now.
            return Unmanaged<TLSSession>.fromOpaque(owner).takeUnretainedValue().sessionArrived(session) ? 1 : 0
        }
    }

    deinit {
        for session in sessions.values { SSL_SESSION_free(session) }
        SSL_CTX_free(context)
    }

    /// A client session for a connection to `host` (a name, or an IP literal without brackets):
    /// SNI names it (unless it is an address), the certificate must be valid for it, and the
    /// last session it sent is offered.
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
        if let session = sessions[host] { SSL_set_session(ssl, session) }
        return try TLSSession(ssl: ssl, role: .client(host: host, context: self))
    }

    /// ALPN for this context's sessions (`["http/1.1"]`: an upgrade needs HTTP/1.1).
    public func offer(protocols: [String]) {
        let wire = protocols.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        _ = wire.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
    }

    /// Keeps `session` (whose reference passes to this context) for the next connection to `host`.
    func remember(_ session: OpaquePointer, for host: String) {
        if let old = sessions.updateValue(session, forKey: host) { SSL_SESSION_free(old) }
    }
}
