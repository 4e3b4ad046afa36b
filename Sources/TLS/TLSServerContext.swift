import CTLS

/// The server side of intercepted connections: TLS 1.2 and 1.3 only, ALPN `h2` (when HTTP/2 is
/// on) then `http/1.1` in the server's order of preference (a client that offers neither speaks
/// HTTP/1.1 without ALPN), session tickets on, and each connection shown the leaf minted for its
/// SNI name (the CONNECT host when there is none).
/// - SeeAlso: `SSL_CTX_new(3)`, `SSL_CTX_set_tlsext_servername_callback(3)`, `SSL_CTX_set_alpn_select_cb(3)`.
public final class TLSServerContext {
    let context: OpaquePointer
    /// Mints and keeps the leaves.
    public let minter: LeafMinter
    /// The ALPN protocols agreed to, most preferred first.
    public let protocols: [String]

    /// - Parameter protocols: ALPN names in the server's order of preference (`["h2", "http/1.1"]`).
    public init(minter: LeafMinter, protocols: [String] = ["http/1.1"]) throws(TLSError) {
        self.protocols = protocols
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("create the TLS context") }
        self.context = context
        self.minter = minter
        guard ctls_ctx_set_min_version(context, TLS1_2_VERSION) == 1,
            ctls_ctx_set_max_version(context, TLS1_3_VERSION) == 1,
            SSL_CTX_use_PrivateKey(context, minter.key) == 1
        else { throw TLSError("configure the TLS context") }
        _ = ctls_ctx_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, offered, offeredLength, owner in
                guard let owner else { return SSL_TLSEXT_ERR_NOACK }
                let server = Unmanaged<TLSServerContext>.fromOpaque(owner).takeUnretainedValue()
                return server.select(out, outLength, offered, offeredLength)
            }, Unmanaged.passUnretained(self).toOpaque())
        ctls_ctx_set_servername_callback(
            context,
            { ssl, _, _ in
                guard let ssl, let owner = ctls_get_ex_data(ssl) else { return SSL_TLSEXT_ERR_OK }
                let session = Unmanaged<TLSSession>.fromOpaque(owner).takeUnretainedValue()
                return session.serverNameArrived() ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_ALERT_FATAL
            }, nil)
    }

    deinit { SSL_CTX_free(context) }

    /// A server session for one accepted connection; `defaultName` is the name its leaf is for
    /// when the client sends no SNI (the CONNECT host).
    public func makeSession(defaultName: String) throws(TLSError) -> TLSSession {
        guard let ssl = SSL_new(context) else { throw TLSError("create a TLS session") }
        return try TLSSession(ssl: ssl, role: .server(minter: minter, defaultName: defaultName))
    }

    /// ALPN: the first of ``protocols`` the client offered; otherwise none is agreed (the client
    /// speaks HTTP/1.1).
    private func select(
        _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ outLength: UnsafeMutablePointer<UInt8>?,
        _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32
    ) -> Int32 {
        guard let offered, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
        for wanted in protocols {
            let name = Array(wanted.utf8)
            var index = 0
            while index < Int(offeredLength) {
                let length = Int(offered[index])
                let start = index + 1
                if length == name.count, start + length <= Int(offeredLength),
                    (0..<length).allSatisfy({ offered[start + $0] == name[$0] })
                {
                    out.pointee = offered + start
                    outLength.pointee = UInt8(length)
                    return SSL_TLSEXT_ERR_OK
                }
                index = start + length
            }
        }
        return SSL_TLSEXT_ERR_NOACK
    }
}
