import EventIO
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The client socket's events: reads go to the state the connection is in, and the end of the
/// input (a FIN, an error, an intercepted client's close_notify or failed record) ends it as
/// that state says.
extension ClientConnection: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) {
        noteRead()
        switch state {
        case .idle, .readingHead: processInput()
        case .exchanging(let exchange):
            // An upload: everything the socket holds (up to the mark), not 4 KiB per wakeup.
            connection.readAvailable(upTo: inputHighWater)
            exchange.clientDataAvailable()
        case .tunnelling(let tunnel): tunnel.clientReadable()
        case .upgrading(let upgrade):
            if let tls = inside?.tls { _ = tls.advance() }
            upgrade.clientReadable()
        case .http2(let http2):
            _ = http2.tls.advance()
            http2.readable()
        case .peeking: peek()
        case .handshaking: handshake()
        case .closed: connection.drainInput(connection.inputCount)
        }
        tlsInputEnded()
    }

    /// An intercepted client's TLS input ended with what was read: its close_notify is what a
    /// FIN is on a plain connection (what it asked for is still answered, then the connection
    /// closes), and a record that failed what a socket error is (RFC 8446 §6.1, §6.2).
    private func tlsInputEnded() {
        let tls: TLSStream
        switch state {
        case .idle, .readingHead, .exchanging:
            guard let inner = inside?.tls else { return }
            tls = inner
        case .http2(let http2):
            // Answers still on their way go out first (the client only closed its sending side).
            guard http2.isIdle || http2.tls.failed else { return }
            tls = http2.tls
        default: return
        }
        guard input != .ended, tls.inputEnded, tls.inputCount == 0 else { return }
        self.connection(connection, didReceive: tls.failed ? .error(code: EPROTO, resolving: false) : .endOfStream)
    }

    func connectionDidDrain(_ connection: Connection) {
        switch state {
        case .exchanging(let exchange): exchange.clientDrained()
        case .tunnelling(let tunnel): tunnel.clientDrained()
        case .upgrading(let upgrade): upgrade.clientDrained()
        case .http2(let http2): http2.drained()
        default: break
        }
    }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (state, event) {
        case (.tunnelling(let tunnel), _):
            tunnel.clientEvent(event)
        case (.upgrading(let upgrade), _):
            if case .endOfStream = event { input = .ended }
            upgrade.clientEvent(event)
        case (.http2(let http2), .timeout(reading: true)) where !http2.isIdle:
            // Quiet, but streams are running (a long answer): not idle. Reading goes on (window
            // updates, the client's close), and the timeout with it.
            connection.resumeReading()
        case (.http2(let http2), .timeout(let reading)):
            // Idle with no stream running: GOAWAY and close; a stalled writer is gone.
            if reading { http2.shutdown() } else { http2.clientGone() }
            if !reading { close() }
        case (.http2(let http2), .endOfStream), (.http2(let http2), .error):
            input = .ended
            http2.clientGone()
            close()
        case (.handshaking(let authority, _, let key), .endOfStream), (.handshaking(let authority, _, let key), .error):
            // A reset or a close in the middle of the handshake is how many clients refuse a certificate.
            certificateRefused(authority, key, reason: "it closed the connection during the handshake")
        case (.handshaking(let authority, _, let key), .timeout):
            handshakeFailed(authority, key, .protocolError("no handshake within tls.handshake_timeout"))
        case (.peeking(let authority, _), .endOfStream), (.peeking(let authority, _), .error):
            // Gone in the middle of its ClientHello (before it saw a certificate): not a refusal.
            if connection.inputCount > 0 {
                env.exchanges.stats.tlsHandshakeFailures += 1
                env.logger.warning(
                    "TLS handshake for \(authority.host) with \(peerText) failed: it closed the connection during its ClientHello"
                )
            }
            close()
        case (.peeking, _):
            close()
        case (.idle, .timeout):
            close()
        case (.readingHead, .timeout):
            reject(.badRequest(reason: .timedOut))
        case (.exchanging, .timeout(reading: true)) where input != .readingBody && idleTimeoutKeptSince != nil:
            keptIdleTimeoutPassed()
        case (.exchanging(let exchange), .timeout(let reading)):
            exchange.clientFailed(reading ? .badRequest(reason: .timedOut) : nil)
        case (.exchanging(let exchange), .endOfStream):
            let wasReadingBody = input == .readingBody
            input = .ended
            if wasReadingBody {
                exchange.clientFailed(
                    .badRequest(reason: .malformed("the client closed the connection during the request body")))
            } else if exchange.isPausedAtBreakpoint {
                // Nobody waits for what a person decides: the paused item goes, and its slot.
                exchange.clientFailed(nil)
            } else {
                connection.pauseReading()  // a half-close: the answer still goes out
            }
        case (.exchanging(let exchange), .error):
            exchange.clientFailed(nil)
        case (.readingHead, .endOfStream):
            input = .ended
            processInput()
            if case .readingHead = state { close() }
        case (_, .endOfStream), (_, .error):
            input = .ended
            // (Bytes held for the end of this turn are unsent too: a response that just ended.)
            if connection.outputCount == 0, connection.heldCount == 0 { close() } else { closeAfterFlush() }
        default:
            break
        }
    }
}
