import EventIO
import TLS

/// A CONNECT tunnel: bytes relayed both ways with backpressure, half-close passed on, and an
/// idle limit. Through a parent proxy it is opened with the parent's own CONNECT (or SOCKS5), over
/// TLS when the parent is `https://`. Only the client's first bytes are looked at, when they come
/// before the far side said anything: plain HTTP (a `ws://` WebSocket, a `curl -p http://…`)
/// is handed back to the client connection, which serves it like any request to the proxy.
final class Tunnel {
    unowned let client: ClientConnection
    let host: String
    let port: UInt16
    let request: ProxyRequest

    /// Where the tunnel stands; each case carries the connections it has.
    enum Phase {
        /// Made, not started.
        case idle
        /// Opening the stream to the origin (directly or through the parent).
        case dialing(Dialer)
        /// Bytes flow.
        case open(Relay)
        case finished
    }

    private var phase = Phase.idle
    private let env: TunnelEnvironment
    private var lastActivity = EventLoop.monotonicNanoseconds()
    private var idleTimer: Timer?
    /// Gives up waiting for the client's first bytes to say what they are (a protocol that sends
    /// a few letters and waits).
    private var firstBytesTimer: Timer?
    private let startTime = EventLoop.monotonicNanoseconds()
    private var bytesDown: Int64 = 0

    /// The client already got its `200` (an interception that turned out not to be TLS): a
    /// failure to connect can only close the connection.
    private let answered: Bool

    init(
        client: ClientConnection, environment: TunnelEnvironment, host: String, port: UInt16, request: ProxyRequest,
        answered: Bool = false
    ) {
        self.answered = answered
        self.client = client
        env = environment
        self.host = host
        self.port = port
        self.request = request
    }

    private var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// The socket to the origin or the parent, in any phase that has one.
    private var upstream: Connection? {
        switch phase {
        case .dialing(let dialer): return dialer.connection
        case .open(let relay): return relay.upstream
        case .idle, .finished: return nil
        }
    }

    func start() {
        let bare = host.withoutIPv6Brackets
        let parent = env.parents.parent(
            host: bare, https: true, rule: env.rules.match(method: "CONNECT", host: bare, path: "/")?.proxy)
        let dialer = Dialer(environment: env, host: host, port: port, parent: parent, localClient: client.isLocal) {
            [unowned self] outcome in
            switch outcome {
            case .opened(let dialed):
                dialed.upstream.delegate = self
                self.becomeOpen(Relay(upstream: dialed.upstream, parentTLS: dialed.parentTLS))
                if dialed.far.inputCount > 0 { self.upstreamReadable() }
            case .failed(let error):
                self.failBeforeOpen(error)
            }
        }
        phase = .dialing(dialer)
        client.connection.pauseReading()
        let limit = env.idleLimit
        idleTimer = Timer(loop: env.loop, repeats: true) { [unowned self] in
            let idle = (EventLoop.monotonicNanoseconds() - self.lastActivity) / 1_000_000
            if idle >= UInt64(limit) { self.finish(error: nil) }
        }
        idleTimer?.schedule(milliseconds: max(100, min(limit, 10_000) / 2))
        dialer.start()
    }

    private func failBeforeOpen(_ error: SluiceError) {
        idleTimer?.cancel()
        phase = .finished
        let problem = Problem(error, url: "\(host):\(port)")
        if answered {
            log(status: problem.status, error: error)
            return client.closeAfterFlush()
        }
        client.connection.write(ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: env.date()))
        log(status: problem.status, error: error)
        client.closeAfterFlush()
    }

    private func log(status: Int, error: SluiceError?) {
        env.log(
            ExchangeRecord(
                client: client.peerText, method: "CONNECT", url: "\(host):\(port)", status: status,
                bytesSent: bytesDown,
                duration: Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9, upstreamTime: nil, error: error,
                aborted: false))
    }

    private func becomeOpen(_ opened: Relay) {
        var relay = opened
        // An interception that found no TLS looked at the first bytes already.
        if answered { relay.firstBytes = .settled }
        phase = .open(relay)
        let upstream = relay.upstream
        upstream.setNoDelay()
        upstream.setWatermarks(readHigh: Tunnel.highWater, writeLow: ClientConnection.outputLowWater)
        upstream.setMaxSingleIO(Tunnel.highWater)
        client.connection.setMaxSingleIO(Tunnel.highWater)
        if !answered { client.connection.write(Tunnel.acceptedResponse) }
        client.connection.resumeReading()
        env.stats.tunnels += 1
        if client.connection.inputCount > 0 { clientReadable() }
    }

    /// Bytes held for a side that does not read (the other side pauses above it); also the most
    /// one read or write moves.
    static let highWater = 256 * 1024

    /// The answer to a CONNECT that was accepted.
    static let acceptedResponse = "HTTP/1.1 200 Connection Established\r\nVia: 1.1 sluice\r\n\r\n"

    // MARK: - Relay

    func clientReadable() {
        guard case .open(var relay) = phase else { return }
        let upstream = relay.upstream
        lastActivity = EventLoop.monotonicNanoseconds()
        if relay.firstBytes == .awaited {
            client.connection.readAvailable(upTo: Tunnel.highWater)
            switch client.connection.withInput(upTo: TunnelContent.limit, { TunnelContent.classify($0) }) {
            case .needMore:
                if client.connection.inputCount > 0 { armFirstBytesTimer() }
                return
            case .http:
                return handOverToHTTP(relay)
            case .tls, .other:
                relay.firstBytes = .settled
                phase = .open(relay)
                firstBytesTimer?.cancel()
            }
        }
        // Everything the socket holds, not libevent's 4 KiB per wakeup.
        if upstream.outputCount < Tunnel.highWater { client.connection.readAvailable(upTo: Tunnel.highWater) }
        if let parentTLS = relay.parentTLS {
            while client.connection.inputCount > 0 {
                let count = client.connection.withFirstInputSegment { segment -> Int in
                    parentTLS.write(segment, more: false)
                    return segment.count
                }
                client.connection.drainInput(count)
            }
        } else {
            client.connection.moveInput(to: upstream)
        }
        if upstream.outputCount >= Tunnel.highWater { client.connection.pauseReading() }
    }

    private func upstreamReadable() {
        guard case .open(var relay) = phase else { return }
        if relay.firstBytes == .awaited {
            // The far side spoke first (SMTP, SSH): not HTTP, whatever the client sends.
            relay.firstBytes = .settled
            phase = .open(relay)
            firstBytesTimer?.cancel()
            relayDown(relay)
            return clientReadable()
        }
        relayDown(relay)
    }

    private func armFirstBytesTimer() {
        guard firstBytesTimer == nil else { return }
        firstBytesTimer = Timer(loop: env.loop) { [unowned self] in
            guard case .open(var relay) = self.phase, relay.firstBytes == .awaited else { return }
            relay.firstBytes = .settled
            self.phase = .open(relay)
            self.clientReadable()
        }
        firstBytesTimer?.schedule(milliseconds: Tunnel.firstBytesWait)
    }

    /// How long a prefix that could still be an HTTP request line is held.
    static let firstBytesWait = 1_000

    /// The client spoke HTTP inside the tunnel: the connection to the far side is not needed (each
    /// request gets its own upstream connection, through the rules, the cache and the contracts).
    private func handOverToHTTP(_ relay: Relay) {
        relay.parentTLS?.close()
        relay.upstream.close()
        phase = .finished
        idleTimer?.cancel()
        firstBytesTimer?.cancel()
        log(status: 200, error: nil)
        client.tunnelCarriesHTTP(ClientConnection.Authority(host: host, port: port))
    }

    /// Moves what the far side sent to the client, as much as the client's buffer takes.
    private func relayDown(_ relay: Relay) {
        let upstream = relay.upstream
        lastActivity = EventLoop.monotonicNanoseconds()
        if client.connection.outputCount < Tunnel.highWater { upstream.readAvailable(upTo: Tunnel.highWater) }
        guard let parentTLS = relay.parentTLS else {
            bytesDown += Int64(upstream.moveInput(to: client.connection))
            if client.connection.outputCount >= Tunnel.highWater { upstream.pauseReading() }
            return
        }
        _ = parentTLS.advance()
        while client.connection.outputCount < Tunnel.highWater, parentTLS.inputCount > 0 {
            let count = parentTLS.withFirstInputSegment { segment -> Int in
                client.connection.write(segment, more: false)
                return segment.count
            }
            parentTLS.drainInput(count)
            bytesDown += Int64(count)
        }
        if client.connection.outputCount >= Tunnel.highWater {
            upstream.pauseReading()
        } else if relay.halfClose.down == .ending || parentTLS.inputEnded {
            downEnded()
        }
    }

    /// Nothing more comes from the far side: the client's side is shut for writing.
    private func downEnded() {
        guard case .open(var relay) = phase, relay.halfClose.down != .ended else { return }
        relay.halfClose.down = .ended
        phase = .open(relay)
        client.connection.shutdownWrite()
        if relay.halfClose.up == .ended { finish(error: nil) }
    }

    func clientDrained() {
        guard case .open(let relay) = phase, relay.halfClose.down != .ended else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        relay.upstream.resumeReading()
        // Plain text already decrypted gets no read event of its own.
        if relay.parentTLS != nil { relayDown(relay) }
    }

    private func upstreamDrained() {
        guard case .open(let relay) = phase, relay.halfClose.up != .ended else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        client.connection.resumeReading()
    }

    func clientEvent(_ event: Connection.Event) {
        switch event {
        case .endOfStream:
            guard case .open(var relay) = phase else { return finish(error: nil) }
            relay.halfClose.up = .ended
            phase = .open(relay)
            relay.parentTLS?.closeWriting()
            relay.upstream.shutdownWrite()
            if relay.halfClose.down == .ended { finish(error: nil) }
        case .error, .timeout:
            finish(error: nil)
        case .connected:
            break
        }
    }

    private func finish(error: SluiceError?) {
        switch phase {
        case .finished: return
        case .open(let relay):
            relay.parentTLS?.close()  // close_notify: the parent's session stays resumable
            relay.upstream.close()
        case .dialing(let dialer): dialer.cancel()
        case .idle: break
        }
        phase = .finished
        idleTimer?.cancel()
        firstBytesTimer?.cancel()
        log(status: 200, error: error)
        client.tunnelDidFinish()
    }
}

extension Tunnel: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) { upstreamReadable() }

    func connectionDidDrain(_ connection: Connection) { upstreamDrained() }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.endOfStream, .open(var relay)):
            guard relay.parentTLS != nil else { return downEnded() }
            if relay.halfClose.down == .open { relay.halfClose.down = .ending }
            phase = .open(relay)
            relayDown(relay)
        case (.connected, _):
            break
        case (.endOfStream, _), (.error, _), (.timeout, _):
            finish(error: nil)
        }
    }
}
