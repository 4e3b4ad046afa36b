import CTLS

/// One TLS session over memory BIOs, the server side of an intercepted connection or the client
/// side of a connection to an `https://` parent: the owner feeds it the bytes read from the socket
/// and writes out what it produces, so it runs on any byte stream and never blocks.
/// - SeeAlso: `SSL_do_handshake(3)`, `SSL_read(3)`, `SSL_write(3)`, `BIO_s_mem(3)`.
public final class TLSSession {
    /// A handshake's progress.
    public enum Step: Equatable, Sendable {
        /// More bytes from the client are needed.
        case needMore
        /// The handshake is complete.
        case established
        /// The handshake failed.
        case failed(Failure)
    }

    /// Why a session failed.
    public enum Failure: Equatable, Sendable {
        /// The client refused the certificate it was shown (alert `unknown_ca`, `bad_certificate`…).
        case certificateRejected(String)
        /// A client session: the server's certificate is not trusted for its name (OpenSSL's words).
        case certificateUntrusted(String)
        /// Not TLS, or a protocol error; OpenSSL's words.
        case protocolError(String)
        /// The certificate could not be made.
        case noCertificate(String)
    }

    /// A read's result.
    public enum Read: Equatable, Sendable {
        case bytes(Int)
        /// Nothing decrypted yet: feed more.
        case needMore
        /// The client sent close_notify.
        case closed
        case failed(String)
    }

    /// Which end of the connection the session is.
    enum Role {
        /// Shows leaves minted by `minter`: the one for `defaultName` unless the SNI names another.
        case server(minter: LeafMinter, defaultName: String)
        /// Verifies the server's certificate for `host`; `context` keeps its sessions for resumption.
        case client(host: String, context: TLSClientContext)
    }

    let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private let role: Role
    /// The SNI name the client sent (a server session), if any.
    public private(set) var serverName: String?
    private var certificateFailure: String?

    /// A server session (``TLSServerContext/makeSession(defaultName:)``) or a client session
    /// (``TLSClientContext/makeSession(host:)``), on `ssl` made from the context.
    init(ssl: OpaquePointer, role: Role) throws(TLSError) {
        guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError("create the session's buffers")
        }
        _ = ctls_bio_set_mem_eof_return(input, -1)  // empty = "more to come", not end of file
        SSL_set_bio(ssl, input, output)  // the session owns both now
        self.ssl = ssl
        self.input = input
        self.output = output
        self.role = role
        switch role {
        case .server(let minter, let defaultName):
            SSL_set_accept_state(ssl)
            _ = ctls_set_ex_data(ssl, Unmanaged.passUnretained(self).toOpaque())
            // The CONNECT host's leaf unless the SNI names another.
            do {
                let certificate = try minter.certificate(for: defaultName, now: monotonicNanoseconds())
                SSL_use_certificate(ssl, certificate)
            } catch {
                certificateFailure = error.description
            }
        case .client:
            SSL_set_connect_state(ssl)
            _ = ctls_set_ex_data(ssl, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    deinit { SSL_free(ssl) }

    /// Called during the ClientHello: shows the leaf for the SNI name.
    func serverNameArrived() -> Bool {
        guard case .server(let minter, let defaultName) = role,
            let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)
        else {
            return certificateFailure == nil
        }
        let text = String(cString: name)
        serverName = text
        guard text.lowercased() != defaultName.lowercased() else { return certificateFailure == nil }
        do {
            let certificate = try minter.certificate(for: text, now: monotonicNanoseconds())
            SSL_use_certificate(ssl, certificate)
            certificateFailure = nil
            return true
        } catch {
            certificateFailure = error.description
            return false
        }
    }

    /// Gives the session bytes read from the client.
    public func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        BIO_write(input, base, Int32(bytes.count))
    }

    /// Advances the handshake with what was fed.
    public func handshake() -> Step {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .established }
        let code = SSL_get_error(ssl, result)
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE { return .needMore }
        return .failed(failure())
    }

    private func failure() -> Failure {
        if let certificateFailure { return .noCertificate(certificateFailure) }
        if case .client = role {
            let verdict = SSL_get_verify_result(ssl)
            if verdict != X509_V_OK {
                _ = TLSError.drainCodes()
                return .certificateUntrusted(String(cString: X509_verify_cert_error_string(verdict)))
            }
        }
        var rejected: String?
        let errors = TLSError.drainCodes()
        for (code, line) in errors where ctls_is_certificate_rejection(ctls_err_reason(code)) != 0 {
            rejected = ERR_reason_error_string(code).map { String(cString: $0) } ?? line
        }
        let lines = errors.map(\.line)
        if let rejected { return .certificateRejected(rejected) }
        return .protocolError(lines.first ?? "the TLS handshake failed")
    }

    /// Decrypts into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .needMore }
        TLSSession.clearErrors()
        let count = SSL_read(ssl, base, Int32(min(buffer.count, Int(Int32.max))))
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needMore
        case SSL_ERROR_ZERO_RETURN: return .closed
        default:
            if case .protocolError(let text) = failure() { return .failed(text) }
            return .failed("TLS read failed")
        }
    }

    /// Encrypts `bytes` (the result waits in ``withOutput(_:)``); `false` on failure.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        TLSSession.clearErrors()
        return SSL_write(ssl, base, Int32(bytes.count)) == Int32(bytes.count)
    }

    /// Bytes for the client, produced by the handshake, writes or close_notify.
    public var pendingOutput: Int { Int(BIO_ctrl_pending(output)) }

    /// Hands what is pending for the client to `body` (to be written out), then forgets it.
    public func withOutput(_ body: (UnsafeRawBufferPointer) -> Void) {
        var data: UnsafeMutablePointer<CChar>?
        let length = ctls_bio_mem_data(output, &data)
        guard length > 0, let data else { return }
        body(UnsafeRawBufferPointer(start: data, count: length))
        _ = ctls_bio_reset(output)
    }

    /// Sends close_notify (its bytes wait in ``withOutput(_:)``), once, after a finished handshake
    /// (also after the peer's own close_notify). A client session closed without it is not
    /// resumed later: OpenSSL forgets sessions that ended abruptly.
    public func close() {
        guard SSL_is_init_finished(ssl) == 1, SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN == 0 else { return }
        ERR_clear_error()
        SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Bytes fed but not yet processed.
    public var pendingInput: Int { Int(BIO_ctrl_pending(input)) }

    /// Whether a read could produce anything without more bytes from the client: records fed
    /// but not decrypted, or plain text decrypted but not read.
    public var hasBufferedInput: Bool { SSL_has_pending(ssl) == 1 || BIO_ctrl_pending(input) > 0 }

    /// Empties this thread's OpenSSL error queue, as `SSL_get_error(3)` needs before an I/O call:
    /// looked at first, since clearing walks all of its slots (most calls find it empty).
    static func clearErrors() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// A client session: the server sent a session (ticket) to resume with next time.
    func sessionArrived(_ session: OpaquePointer) -> Bool {
        guard case .client(let host, let context) = role else { return false }
        context.remember(session, for: host)
        return true
    }

    /// Whether the handshake resumed an earlier session (no certificate exchange, no full key agreement).
    public var resumed: Bool { SSL_session_reused(ssl) == 1 }

    /// The peer's public-key pin, `sha256//BASE64=` (the SHA-256 of its certificate's
    /// SubjectPublicKeyInfo, as `CURLOPT_PINNEDPUBLICKEY` and HPKP write it), after the handshake.
    public var peerKeyPin: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let key = X509_get0_pubkey(certificate) else { return nil }
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(key, &der)
        guard length > 0, let der else { return nil }
        defer { ctls_free(der) }
        let digest = Digest.sha256(UnsafeRawBufferPointer(start: der, count: Int(length)))
        return "sha256//" + Digest.base64(digest)
    }

    /// The ALPN protocol agreed (`h2`, `http/1.1`), if any.
    public var alpn: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The protocol version agreed (`TLSv1.3`).
    public var version: String { String(cString: SSL_get_version(ssl)) }
}
