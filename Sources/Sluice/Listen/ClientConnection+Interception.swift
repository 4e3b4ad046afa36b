import EventIO
import Logging
import TLS

/// Interception: the CONNECT answered, the ClientHello read (and its fingerprint), the TLS
/// handshake with the leaf for the host, a refusal noted against the passthrough windows, and the
/// protocol the client chose (HTTP/1.1 on this connection, or HTTP/2 streams).
extension ClientConnection {
    /// The client's address without its port (a passthrough window is per client, host and fingerprint).
    private var clientAddress: String { connection.peer?.unmapped.host ?? peerText }

    /// The onboarding page gave this client the CA: its blind windows end, so the apps it retries
    /// after trusting it are intercepted at once (not after `tls.passthrough_after_failure`).
    func servedCertificate() {
        guard let interceptor = env.interceptor, interceptor.clearPassthrough(client: clientAddress) > 0 else {
            return
        }
        env.exchanges.logger.info("\(clientAddress) was given Sluice's CA: its passthrough windows ended")
    }

    private func monotonicSeconds() -> Double { Double(EventLoop.monotonicNanoseconds()) / 1e9 }

    /// Answers the CONNECT, then waits for the first bytes: a TLS ClientHello is intercepted
    /// (unless that client is in a passthrough window for the host), plain HTTP is served here,
    /// anything else is tunnelled blind.
    func beginInterception(_ request: ProxyRequest, _ authority: Authority) {
        connection.write(Tunnel.acceptedResponse)
        state = .peeking(authority, request)
        let limit = env.tls.handshakeTimeout
        connection.setTimeouts(readMilliseconds: limit, writeMilliseconds: limit)
        if connection.inputCount > 0 { peek() }
    }

    func peek() {
        guard case .peeking(let authority, let request) = state, connection.inputCount > 0 else { return }
        switch connection.withInput(upTo: TunnelContent.limit, { TunnelContent.classify($0) }) {
        case .needMore:
            // A prefix that could still be a request line waits a second at most, then goes blind.
            return armPeekTimer()
        case .http:
            peekTimer?.cancel()
            return env.servesPlainHTTP ? tunnelCarriesHTTP(authority) : tunnelBlind(authority, request)
        case .other:
            peekTimer?.cancel()
            return tunnelBlind(authority, request)
        case .tls:
            peekTimer?.cancel()
        }
        guard let interceptor = env.interceptor else { return tunnelBlind(authority, request) }
        var key: PassthroughBook.Key?
        switch connection.withInput(upTo: ClientHello.limit + 64, { ClientHello.scan($0) }) {
        case .needMore:
            if connection.inputCount <= ClientHello.limit + 64 { return }
        case .hello(let hello):
            key = Interceptor.key(client: clientAddress, host: authority.host, fingerprint: hello.fingerprint)
        case .notClientHello:
            break  // the TLS session says what is wrong with it
        }
        if let key, interceptor.isBlind(key, now: monotonicSeconds()) {
            env.exchanges.stats.tlsPassthroughTunnels += 1
            return tunnelBlind(authority, request)
        }
        do {
            let tls = TLSStream(raw: connection, session: try interceptor.makeSession(host: authority.host))
            state = .handshaking(authority, tls, key)
            handshake()
        } catch {
            env.logger.error("TLS interception of \(authority.host) for \(peerText) failed: \(error)")
            close()
        }
    }

    private func armPeekTimer() {
        guard peekTimer == nil else { return }
        let timer = Timer(loop: env.exchanges.loop) { [unowned self] in
            if case .peeking(let authority, let request) = self.state { self.tunnelBlind(authority, request) }
        }
        timer.schedule(milliseconds: Tunnel.firstBytesWait)
        peekTimer = timer
    }

    /// The tunnel the client asked for, blind (its `200` was sent).
    private func tunnelBlind(_ authority: Authority, _ request: ProxyRequest) {
        let tunnel = Tunnel(
            client: self, environment: env.tunnels(), host: authority.host, port: authority.port,
            request: request, answered: true)
        state = .tunnelling(tunnel)
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        tunnel.start()
    }

    func handshake() {
        guard case .handshaking(let authority, let tls, let key) = state else { return }
        switch tls.advance() {
        case .handshaking, .open:
            return
        case .established:
            if let key { env.interceptor?.noteHandshake(key, now: monotonicSeconds()) }
            inside = .intercepted(tls, authority)
            stream = tls
            env.exchanges.stats.tlsIntercepted += 1
            if tls.session.alpn == "h2" { return beginHTTP2(tls, authority) }
            enterIdle()
            processInput()
        case .failed(let failure):
            handshakeFailed(authority, key, failure)
        }
    }

    /// The client chose HTTP/2 (ALPN): the connection is its streams from now on.
    private func beginHTTP2(_ tls: TLSStream, _ authority: Authority) {
        do {
            let http2 = try HTTP2Connection(client: self, tls: tls, authority: authority, env: env)
            state = .http2(http2)
            env.exchanges.stats.http2Connections += 1
            connection.setTimeouts(
                readMilliseconds: env.timeouts.clientIdle, writeMilliseconds: env.timeouts.clientBody)
            http2.readable()
        } catch {
            env.logger.error("HTTP/2 for \(peerText) could not start: \(error)")
            close()
        }
    }

    /// A failed handshake is logged once; a client that refused the certificate twice within a
    /// minute gets blind tunnels to that host for `tls.passthrough_after_failure` (apps that pin
    /// keep working), keyed by its fingerprint so that other clients on its address do not.
    func handshakeFailed(_ authority: Authority, _ key: PassthroughBook.Key?, _ failure: TLSSession.Failure) {
        switch failure {
        case .certificateRejected(let reason):
            certificateRefused(authority, key, reason: "it sent the alert \"\(reason)\"")
        case .protocolError(let reason), .noCertificate(let reason), .certificateUntrusted(let reason):
            env.exchanges.stats.tlsHandshakeFailures += 1
            env.logger.warning("TLS handshake for \(authority.host) with \(peerText) failed: \(reason)")
            close()
        }
    }

    func certificateRefused(_ authority: Authority, _ key: PassthroughBook.Key?, reason: String) {
        env.exchanges.stats.tlsCertificateRefusals += 1
        let host = authority.host
        var message = "client \(peerText) refused the certificate for \(host) (\(reason))"
        if let key, let interceptor = env.interceptor {
            message += "; TLS fingerprint \(key.fingerprint)"
            switch interceptor.noteRefusal(key, now: monotonicSeconds()) {
            case .off: break
            case .counted:
                message += "; a second refusal within a minute makes its tunnels to \(host) blind"
            case .trustedRecently:
                message += "; not pinning (it completed a handshake for \(host) recently), so it stays intercepted"
            case .started:
                env.exchanges.stats.tlsPassthroughStarted += 1
                message +=
                    "; it refused twice within a minute, so its tunnels to \(host) are blind for \(env.tls.passthroughAfterFailure / 1000) s (other clients are still intercepted); end it with `sluice tls passthrough clear --host \(host)`, DELETE /tls/passthrough on the admin API, or the page"
            }
        }
        env.logger.warning("\(message)")
        close()
    }
}
