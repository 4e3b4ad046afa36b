import EventIO

/// A CONNECT tunnel: bytes relayed both ways with backpressure, half-close passed on, and an
/// idle limit. Nothing inside is inspected.
final class Tunnel {
    unowned let client: ClientConnection
    let host: String
    let port: UInt16
    let request: ProxyRequest
    private var upstream: Connection?
    private var established = false
    private var clientDone = false
    private var upstreamDone = false
    private var lastActivity = EventLoop.monotonicNanoseconds()
    private var idleTimer: Timer?
    private let startTime = EventLoop.monotonicNanoseconds()
    private var bytesDown: Int64 = 0
    private var finished = false

    /// The client already got its `200` (an interception that turned out not to be TLS): a
    /// failure to connect can only close the connection.
    private let answered: Bool

    /// The parent proxy the tunnel goes through (`upstream.proxy`, a host rule's `proxy:`), and
    /// the CONNECT (or SOCKS5) exchange with it while the tunnel is not open yet.
    private let parent: ParentProxy?
    private var handshake: ParentHandshake?

    init(client: ClientConnection, host: String, port: UInt16, request: ProxyRequest, answered: Bool = false) {
        self.answered = answered
        self.client = client
        self.host = host
        self.port = port
        self.request = request
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let environment = client.server.environment
        parent = environment.parents.parent(
            host: bare, https: true, rule: environment.rules.match(method: "CONNECT", host: bare, path: "/")?.proxy)
    }

    func start() {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        var target = (host: bare, port: port)
        if let parent {
            guard let handshake = ParentHandshake(parent: parent, host: bare, port: port) else {
                return failBeforeEstablished(
                    .upstreamFailed(
                        reason: .parentFailed(
                            parent: parent.description,
                            detail:
                                "blind CONNECT tunnels cannot go through an https:// parent yet; use http:// or socks5h://, or intercept the host"
                        )))
            }
            self.handshake = handshake
            target = (parent.host, parent.port)
        }
        let upstream = Connection(
            loop: client.server.loop, connectingTo: target.host, port: target.port, resolver: client.server.resolver)
        upstream.delegate = self
        self.upstream = upstream
        client.connection.pauseReading()
        let limit = client.server.configuration.timeouts.tunnelIdle
        idleTimer = Timer(loop: client.server.loop, repeats: true) { [unowned self] in
            let idle = (EventLoop.monotonicNanoseconds() - self.lastActivity) / 1_000_000
            if idle >= UInt64(limit) { self.finish(error: nil) }
        }
        idleTimer?.schedule(milliseconds: max(100, min(limit, 10_000) / 2))
        // Connect timeout.
        let connectLimit = client.server.configuration.timeouts.upstreamConnect
        let connectTimer = Timer(loop: client.server.loop) { [weak self] in
            guard let self, !self.established, !self.finished else { return }
            self.failBeforeEstablished(
                .upstreamFailed(reason: .timedOut(detail: "CONNECT to \(self.host):\(self.port) timed out.")))
        }
        connectTimer.schedule(milliseconds: connectLimit)
        self.connectTimer = connectTimer
    }
    private var connectTimer: Timer?

    private func failBeforeEstablished(_ error: SluiceError) {
        upstream?.close()
        upstream = nil
        connectTimer?.cancel()
        idleTimer?.cancel()
        finished = true
        let problem = Problem(error, url: "\(host):\(port)")
        if answered {
            log(status: problem.status, error: error)
            return client.closeAfterFlush()
        }
        client.connection.write(
            ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: client.server.date.now))
        log(status: problem.status, error: error)
        client.closeAfterFlush()
    }

    private func log(status: Int, error: SluiceError?) {
        client.server.log(
            ExchangeRecord(
                client: client.peerText, method: "CONNECT", url: "\(host):\(port)", status: status,
                bytesSent: bytesDown,
                duration: Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9, upstreamTime: nil, error: error,
                aborted: false))
    }

    private func didConnect() {
        guard let upstream else { return }
        if let handshake {
            // Connected to the parent (which the configuration named): open the tunnel through it.
            upstream.write(handshake.opening)
            return
        }
        connectTimer?.cancel()
        if let address = upstream.remoteAddress,
            let refusal = client.server.session.targetGuard.refusal(address, localClient: client.isLocal)
        {
            return failBeforeEstablished(.forbidden(reason: refusal))
        }
        becomeEstablished()
    }

    /// The parent's answers until the tunnel through it is open (or refused).
    private func parentReadable() {
        guard let upstream else { return }
        while var current = handshake {
            let step = upstream.withInput(upTo: ParentHandshake.headLimit) { current.receive($0) }
            handshake = current
            switch step {
            case .needMore:
                return
            case .reply(let bytes, let consumed):
                upstream.drainInput(consumed)
                upstream.write(bytes)
            case .established(let consumed):
                upstream.drainInput(consumed)
                handshake = nil
                connectTimer?.cancel()
                becomeEstablished()
                if upstream.inputCount > 0 { upstreamReadable() }
                return
            case .failed(let error):
                return failBeforeEstablished(error)
            }
        }
    }

    private func becomeEstablished() {
        guard let upstream else { return }
        established = true
        upstream.setNoDelay()
        upstream.setWatermarks(readHigh: ResponseOutput.highWater, writeLow: ClientConnection.outputLowWater)
        if !answered { client.connection.write(Tunnel.acceptedResponse) }
        client.connection.resumeReading()
        client.server.stats.tunnels += 1
        if client.connection.inputCount > 0 { clientReadable() }
    }

    /// The answer to a CONNECT that was accepted.
    static let acceptedResponse = "HTTP/1.1 200 Connection Established\r\nVia: 1.1 sluice\r\n\r\n"

    // MARK: - Relay

    func clientReadable() {
        guard established, let upstream else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        client.connection.moveInput(to: upstream)
        if upstream.outputCount >= ResponseOutput.highWater { client.connection.pauseReading() }
    }

    private func upstreamReadable() {
        if handshake != nil { return parentReadable() }
        guard let upstream else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        bytesDown += Int64(upstream.moveInput(to: client.connection))
        if client.connection.outputCount >= ResponseOutput.highWater { upstream.pauseReading() }
    }

    func clientDrained() {
        guard let upstream, !upstreamDone else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        upstream.resumeReading()
    }

    private func upstreamDrained() {
        guard !clientDone else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        client.connection.resumeReading()
    }

    func clientEvent(_ event: Connection.Event) {
        switch event {
        case .endOfStream:
            clientDone = true
            if !established { return finish(error: nil) }
            upstream?.shutdownWrite()
            if upstreamDone { finish(error: nil) }
        case .error, .timeout:
            finish(error: nil)
        case .connected:
            break
        }
    }

    private func finish(error: SluiceError?) {
        guard !finished else { return }
        finished = true
        idleTimer?.cancel()
        connectTimer?.cancel()
        upstream?.close()
        upstream = nil
        log(status: 200, error: error)
        client.tunnelDidFinish()
    }
}

extension Tunnel: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) { upstreamReadable() }

    func connectionDidDrain(_ connection: Connection) { upstreamDrained() }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch event {
        case .connected:
            didConnect()
        case .endOfStream where handshake != nil:
            failBeforeEstablished(
                .upstreamFailed(
                    reason: .parentFailed(
                        parent: parent?.description ?? "", detail: "it closed the connection before the tunnel opened"))
            )
        case .endOfStream:
            upstreamDone = true
            client.connection.shutdownWrite()
            if clientDone { finish(error: nil) }
        case .error(let code, let resolving):
            guard established else {
                let detail = resolving ? DNSResolver.describe(code) : "error \(code)"
                if let parent {
                    return failBeforeEstablished(
                        .upstreamFailed(
                            reason: .parentFailed(
                                parent: parent.description, detail: "could not connect to it (\(detail))")))
                }
                return failBeforeEstablished(
                    resolving
                        ? .upstreamFailed(reason: .resolveFailed(host: host))
                        : .upstreamFailed(reason: .connectFailed(host: "\(host):\(port)", detail: detail)))
            }
            finish(error: nil)
        case .timeout:
            finish(error: nil)
        }
    }
}
