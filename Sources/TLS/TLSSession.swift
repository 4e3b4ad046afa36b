import CTLS

/// Where a session's records come from and go to: the socket, or the stream under it (TLS in
/// TLS). The session reads records straight from it as it decrypts, and writes what it makes
/// straight to it: no buffer of its own in between.
public protocol TLSTransport: AnyObject {
    /// Copies up to `buffer.count` received bytes into `buffer` and consumes them; 0 when none
    /// wait (the session asks again once more arrived).
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int
    /// Received bytes waiting.
    var receivable: Int { get }
    /// Sends `bytes`, all of them (what the socket does not take now is queued).
    func send(_ bytes: UnsafeRawBufferPointer)
}

/// One TLS session over a ``TLSTransport`` (through a BIO of its own kind), the server side of an
/// intercepted connection or the client side of a connection to an `https://` origin or parent:
/// it reads and writes records as it needs them, so it runs on any byte stream and never blocks.
/// - SeeAlso: `SSL_do_handshake(3)`, `SSL_read(3)`, `SSL_write(3)`, `BIO_meth_new(3)`.
public final class TLSSession {
    /// A handshake's progress.
    public enum Step: Equatable, Sendable {
        /// More bytes from the peer are needed (they are read as they arrive).
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
        /// Nothing decrypted yet: the rest of a record is still on its way.
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
    private let role: Role
    /// The byte stream under the session: set by its owner before the first handshake step. Held
    /// unowned (the owner holds the session: no cycle); using a session past its owner traps.
    public unowned var transport: (any TLSTransport)?
    /// The SNI name the client sent (a server session), if any.
    public private(set) var serverName: String?
    private var certificateFailure: String?

    /// A server session (``TLSServerContext/makeSession(defaultName:)``) or a client session
    /// (``TLSClientContext/makeSession(host:)``), on `ssl` made from the context.
    init(ssl: OpaquePointer, role: Role) throws(TLSError) {
        guard let method = TLSSession.transportMethod, let bio = BIO_new(method) else {
            SSL_free(ssl)
            throw TLSError("create the session's transport")
        }
        SSL_set_bio(ssl, bio, bio)  // one BIO both ways: one reference, the session's now
        // Records are read as much at a time as the transport has (not a header, then its body):
        // one call for what one socket read brought.
        SSL_set_read_ahead(ssl, 1)
        self.ssl = ssl
        self.role = role
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
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

    /// Advances the handshake with what the transport has received.
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

    /// Encrypts `bytes`, written to the transport as records; `false` on failure.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        TLSSession.clearErrors()
        return SSL_write(ssl, base, Int32(bytes.count)) == Int32(bytes.count)
    }

    /// Sends close_notify (written to the transport), once, after a finished handshake
    /// (also after the peer's own close_notify). A client session closed without it is not
    /// resumed later: OpenSSL forgets sessions that ended abruptly.
    public func close() {
        guard SSL_is_init_finished(ssl) == 1, SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN == 0 else { return }
        ERR_clear_error()
        SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Whether the session holds what a read could produce without the transport: a record
    /// read but not decrypted, or plain text decrypted but not read.
    public var hasBufferedInput: Bool { SSL_has_pending(ssl) == 1 }

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

    // MARK: - The transport BIO

    /// The BIO kind that reads and writes through a session's ``transport``: made once.
    nonisolated(unsafe) private static let transportMethod: OpaquePointer? = {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice transport") else {
            return nil
        }
        BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        BIO_meth_set_read(method) { bio, data, length in
            ctls_bio_clear_retry_flags(bio)
            guard let bio, let data, length > 0, let transport = TLSSession.of(bio)?.transport else { return -1 }
            let count = transport.receive(into: UnsafeMutableRawBufferPointer(start: data, count: Int(length)))
            guard count > 0 else {
                ctls_bio_set_retry_read(bio)  // nothing yet: "more to come", never end of file
                return -1
            }
            return Int32(count)
        }
        BIO_meth_set_write(method) { bio, data, length in
            ctls_bio_clear_retry_flags(bio)
            guard let bio, let data, length > 0, let transport = TLSSession.of(bio)?.transport else { return 0 }
            transport.send(UnsafeRawBufferPointer(start: data, count: Int(length)))
            return length
        }
        BIO_meth_set_ctrl(method) { bio, command, _, _ in
            switch command {
            case BIO_CTRL_FLUSH: return 1  // written as made
            case BIO_CTRL_PENDING:
                guard let bio, let transport = TLSSession.of(bio)?.transport else { return 0 }
                return transport.receivable
            default: return 0  // no kernel TLS, no duplication, no end of file
            }
        }
        return method
    }()

    private static func of(_ bio: OpaquePointer) -> TLSSession? {
        BIO_get_data(bio).map { Unmanaged<TLSSession>.fromOpaque($0).takeUnretainedValue() }
    }
}
