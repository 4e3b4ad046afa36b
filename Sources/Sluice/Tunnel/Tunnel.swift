import EventIO
import TLS

/// A CONNECT tunnel: bytes relayed both ways with backpressure, half-close passed on, and an
/// idle limit. Nothing inside is inspected. Through a parent proxy it is opened with the parent's
/// own CONNECT (or SOCKS5), over TLS when the parent is `https://`.
final class Tunnel {
    unowned let client: ClientConnection
    let host: String
    let port: UInt16
    let request: ProxyRequest

    /// Where the tunnel stands; each case carries the connections it has.
    enum Phase {
        /// Made, not started.
        case idle
        /// Connecting to the origin, or to the parent.
        case connecting(Connection)
        /// Agreeing TLS with an `https://` parent.
        case securing(Connection, TLSStream)
        /// Asking the parent to open the tunnel (over TLS to an `https://` parent).
        case asking(Connection, TLSStream?, ParentHandshake)
        /// Bytes flow.
        case open(Relay)
        case finished
    }

    private var phase = Phase.idle
    private let env: TunnelEnvironment
    private var lastActivity = EventLoop.monotonicNanoseconds()
    private var idleTimer: Timer?
    private var connectTimer: Timer?
    private let startTime = EventLoop.monotonicNanoseconds()
    private var bytesDown: Int64 = 0

    /// The client already got its `200` (an interception that turned out not to be TLS): a
    /// failure to connect can only close the connection.
    private let answered: Bool

    /// The parent proxy the tunnel goes through (`upstream.proxy`, a host rule's `proxy:`).
    private let parent: ParentProxy?
    /// The host without an IPv6 literal's brackets.
    private let bareHost: String

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
        bareHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        parent = environment.parents.parent(
            host: bareHost, https: true,
            rule: environment.rules.match(method: "CONNECT", host: bareHost, path: "/")?.proxy
        )
    }

    private var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// The socket to the origin or the parent, in any phase that has one.
    private var upstream: Connection? {
        switch phase {
        case .connecting(let upstream), .securing(let upstream, _), .asking(let upstream, _, _): return upstream
        case .open(let relay): return relay.upstream
        case .idle, .finished: return nil
        }
    }

    func start() {
        let target = parent.map { ($0.host, $0.port) } ?? (bareHost, port)
        let upstream = Connection(loop: env.loop, connectingTo: target.0, port: target.1, resolver: env.resolver)
        upstream.delegate = self
        phase = .connecting(upstream)
        client.connection.pauseReading()
        let limit = env.idleLimit
        idleTimer = Timer(loop: env.loop, repeats: true) { [unowned self] in
            let idle = (EventLoop.monotonicNanoseconds() - self.lastActivity) / 1_000_000
            if idle >= UInt64(limit) { self.finish(error: nil) }
        }
        idleTimer?.schedule(milliseconds: max(100, min(limit, 10_000) / 2))
        // Connect timeout: until the tunnel is open, through TLS and the parent's answer.
        let connectTimer = Timer(loop: env.loop) { [weak self] in
            guard let self else { return }
            switch self.phase {
            case .connecting, .securing, .asking:
                self.failBeforeOpen(
                    .upstreamFailed(reason: .timedOut(detail: "CONNECT to \(self.host):\(self.port) timed out.")))
            case .idle, .open, .finished:
                return
            }
        }
        connectTimer.schedule(milliseconds: env.connectLimit)
        self.connectTimer = connectTimer
    }

    private func failBeforeOpen(_ error: SluiceError) {
        upstream?.close()
        connectTimer?.cancel()
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

    private func parentFailed(_ detail: String) {
        failBeforeOpen(.upstreamFailed(reason: .parentFailed(parent: parent?.description ?? "", detail: detail)))
    }

    private func log(status: Int, error: SluiceError?) {
        env.log(
            ExchangeRecord(
                client: client.peerText, method: "CONNECT", url: "\(host):\(port)", status: status,
                bytesSent: bytesDown,
                duration: Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9, upstreamTime: nil, error: error,
                aborted: false))
    }

    private func didConnect() {
        guard case .connecting(let upstream) = phase else { return }
        guard let parent else {
            connectTimer?.cancel()
            if let address = upstream.remoteAddress,
                let refusal = env.targetGuard.refusal(address, localClient: client.isLocal)
            {
                return failBeforeOpen(.forbidden(reason: refusal))
            }
            return becomeOpen(Relay(upstream: upstream, parentTLS: nil))
        }
        // Connected to the parent (which the configuration named): TLS first if it is https://.
        guard parent.scheme == .https else { return ask(parent, upstream, over: nil) }
        guard let context = env.parentTLS else {
            return parentFailed("no TLS context for https:// parents")
        }
        do {
            let tls = TLSStream(raw: upstream, session: try context.makeSession(host: parent.host))
            phase = .securing(upstream, tls)
            secure()
        } catch {
            parentFailed("TLS could not start: \(error)")
        }
    }

    /// Advances TLS with an `https://` parent; once agreed, asks it for the tunnel.
    private func secure() {
        guard case .securing(let upstream, let tls) = phase, let parent else { return }
        switch tls.advance() {
        case .handshaking:
            return
        case .established, .open:
            env.stats.parentTLSHandshakes += 1
            if tls.session.resumed { env.stats.parentTLSResumed += 1 }
            ask(parent, upstream, over: tls)
        case .failed(.certificateUntrusted(let reason)):
            parentFailed("its TLS certificate is not trusted (\(reason)); see upstream.proxy_ca_file")
        case .failed(.protocolError(let reason)), .failed(.certificateRejected(let reason)),
            .failed(.noCertificate(let reason)):
            parentFailed("TLS with it failed (\(reason))")
        }
    }

    /// Sends the parent the CONNECT (or the SOCKS5 greeting).
    private func ask(_ parent: ParentProxy, _ upstream: Connection, over tls: TLSStream?) {
        let handshake = ParentHandshake(parent: parent, host: bareHost, port: port)
        phase = .asking(upstream, tls, handshake)
        let far: any ClientStream = tls ?? upstream
        far.write(handshake.opening)
        if far.inputCount > 0 { parentAnswered() }
    }

    /// The parent's answers until the tunnel through it is open (or refused).
    private func parentAnswered() {
        while case .asking(let upstream, let tls, var handshake) = phase {
            let far: any ClientStream = tls ?? upstream
            let step = far.withInput(upTo: ParentHandshake.headLimit) { handshake.receive($0) }
            phase = .asking(upstream, tls, handshake)
            switch step {
            case .needMore:
                return
            case .reply(let bytes, let consumed):
                far.drainInput(consumed)
                far.write(bytes)
            case .established(let consumed):
                far.drainInput(consumed)
                connectTimer?.cancel()
                becomeOpen(Relay(upstream: upstream, parentTLS: tls))
                if far.inputCount > 0 { upstreamReadable() }
                return
            case .failed(let error):
                return failBeforeOpen(error)
            }
        }
    }

    private func becomeOpen(_ relay: Relay) {
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
        guard case .open(let relay) = phase else { return }
        let upstream = relay.upstream
        lastActivity = EventLoop.monotonicNanoseconds()
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
        switch phase {
        case .securing: secure()
        case .asking: parentAnswered()
        case .open(let relay): relayDown(relay)
        case .idle, .connecting, .finished: return
        }
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
        let tls: TLSStream?
        switch phase {
        case .finished: return
        case .open(let relay): tls = relay.parentTLS
        case .asking(_, let agreed, _): tls = agreed
        case .idle, .connecting, .securing: tls = nil
        }
        let upstream = self.upstream
        phase = .finished
        idleTimer?.cancel()
        connectTimer?.cancel()
        tls?.close()  // close_notify: the parent's session stays resumable
        upstream?.close()
        log(status: 200, error: error)
        client.tunnelDidFinish()
    }
}

extension Tunnel: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) { upstreamReadable() }

    func connectionDidDrain(_ connection: Connection) { upstreamDrained() }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.connected, _):
            didConnect()
        case (.endOfStream, .securing), (.endOfStream, .asking):
            parentFailed("it closed the connection before the tunnel opened")
        case (.endOfStream, .open(var relay)):
            guard relay.parentTLS != nil else { return downEnded() }
            if relay.halfClose.down == .open { relay.halfClose.down = .ending }
            phase = .open(relay)
            relayDown(relay)
        case (.error(let code, _), .securing), (.error(let code, _), .asking):
            parentFailed("the connection to it failed before the tunnel opened (error \(code))")
        case (.error(let code, let resolving), .connecting):
            let detail = resolving ? DNSResolver.describe(code) : "error \(code)"
            if parent != nil { return parentFailed("could not connect to it (\(detail))") }
            failBeforeOpen(
                resolving
                    ? .upstreamFailed(reason: .resolveFailed(host: host))
                    : .upstreamFailed(reason: .connectFailed(host: "\(host):\(port)", detail: detail)))
        case (.endOfStream, _), (.error, _), (.timeout, _):
            finish(error: nil)
        }
    }
}
