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

    /// Where the tunnel stands.
    enum Phase {
        /// Connecting to the origin, or to the parent.
        case connecting
        /// Agreeing TLS with an `https://` parent.
        case securing(TLSStream)
        /// Asking the parent to open the tunnel.
        case asking(ParentHandshake)
        /// Bytes flow both ways.
        case open
        case finished
    }

    private var phase = Phase.connecting
    private var upstream: Connection?
    /// TLS over `upstream` to an `https://` parent, once agreed: the tunnel's bytes are its plain text.
    private var parentTLS: TLSStream?
    private var clientDone = false
    private var upstreamDone = false
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

    init(client: ClientConnection, host: String, port: UInt16, request: ProxyRequest, answered: Bool = false) {
        self.answered = answered
        self.client = client
        self.host = host
        self.port = port
        self.request = request
        bareHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let environment = client.server.environment
        parent = environment.parents.parent(
            host: bareHost, https: true,
            rule: environment.rules.match(method: "CONNECT", host: bareHost, path: "/")?.proxy
        )
    }

    private var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    private var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// The far side's byte stream: the socket, or the plain text of TLS to the parent.
    private var far: (any ClientStream)? { parentTLS ?? upstream }

    func start() {
        let target = parent.map { ($0.host, $0.port) } ?? (bareHost, port)
        let upstream = Connection(
            loop: client.server.loop, connectingTo: target.0, port: target.1, resolver: client.server.resolver)
        upstream.delegate = self
        self.upstream = upstream
        client.connection.pauseReading()
        let limit = client.server.configuration.timeouts.tunnelIdle
        idleTimer = Timer(loop: client.server.loop, repeats: true) { [unowned self] in
            let idle = (EventLoop.monotonicNanoseconds() - self.lastActivity) / 1_000_000
            if idle >= UInt64(limit) { self.finish(error: nil) }
        }
        idleTimer?.schedule(milliseconds: max(100, min(limit, 10_000) / 2))
        // Connect timeout: until the tunnel is open, through TLS and the parent's answer.
        let connectLimit = client.server.configuration.timeouts.upstreamConnect
        let connectTimer = Timer(loop: client.server.loop) { [weak self] in
            guard let self, !self.isOpen, !self.isFinished else { return }
            self.failBeforeOpen(
                .upstreamFailed(reason: .timedOut(detail: "CONNECT to \(self.host):\(self.port) timed out.")))
        }
        connectTimer.schedule(milliseconds: connectLimit)
        self.connectTimer = connectTimer
    }

    private func failBeforeOpen(_ error: SluiceError) {
        upstream?.close()
        upstream = nil
        parentTLS = nil
        connectTimer?.cancel()
        idleTimer?.cancel()
        phase = .finished
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

    private func parentFailed(_ detail: String) {
        failBeforeOpen(.upstreamFailed(reason: .parentFailed(parent: parent?.description ?? "", detail: detail)))
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
        guard let parent else {
            connectTimer?.cancel()
            if let address = upstream.remoteAddress,
                let refusal = client.server.session.targetGuard.refusal(address, localClient: client.isLocal)
            {
                return failBeforeOpen(.forbidden(reason: refusal))
            }
            return becomeOpen()
        }
        // Connected to the parent (which the configuration named): TLS first if it is https://.
        guard parent.scheme == .https else { return ask(parent) }
        guard let context = client.server.environment.parentTLS else {
            return parentFailed("no TLS context for https:// parents")
        }
        do {
            let tls = TLSStream(raw: upstream, session: try context.makeSession(host: parent.host))
            phase = .securing(tls)
            secure()
        } catch {
            parentFailed("TLS could not start: \(error)")
        }
    }

    /// Advances TLS with an `https://` parent; once agreed, asks it for the tunnel.
    private func secure() {
        guard case .securing(let tls) = phase, let parent else { return }
        switch tls.advance() {
        case .handshaking:
            return
        case .established, .open:
            parentTLS = tls
            client.server.stats.parentTLSHandshakes += 1
            if tls.session.resumed { client.server.stats.parentTLSResumed += 1 }
            ask(parent)
        case .failed(.certificateUntrusted(let reason)):
            parentFailed("its TLS certificate is not trusted (\(reason)); see upstream.proxy_ca_file")
        case .failed(.protocolError(let reason)), .failed(.certificateRejected(let reason)),
            .failed(.noCertificate(let reason)):
            parentFailed("TLS with it failed (\(reason))")
        }
    }

    /// Sends the parent the CONNECT (or the SOCKS5 greeting).
    private func ask(_ parent: ParentProxy) {
        let handshake = ParentHandshake(parent: parent, host: bareHost, port: port)
        phase = .asking(handshake)
        far?.write(handshake.opening)
        if (far?.inputCount ?? 0) > 0 { parentAnswered() }
    }

    /// The parent's answers until the tunnel through it is open (or refused).
    private func parentAnswered() {
        guard let far else { return }
        while case .asking(var handshake) = phase {
            let step = far.withInput(upTo: ParentHandshake.headLimit) { handshake.receive($0) }
            phase = .asking(handshake)
            switch step {
            case .needMore:
                return
            case .reply(let bytes, let consumed):
                far.drainInput(consumed)
                far.write(bytes)
            case .established(let consumed):
                far.drainInput(consumed)
                connectTimer?.cancel()
                becomeOpen()
                if far.inputCount > 0 { upstreamReadable() }
                return
            case .failed(let error):
                return failBeforeOpen(error)
            }
        }
    }

    private func becomeOpen() {
        guard let upstream else { return }
        phase = .open
        upstream.setNoDelay()
        upstream.setWatermarks(readHigh: Tunnel.highWater, writeLow: ClientConnection.outputLowWater)
        upstream.setMaxSingleIO(Tunnel.highWater)
        client.connection.setMaxSingleIO(Tunnel.highWater)
        if !answered { client.connection.write(Tunnel.acceptedResponse) }
        client.connection.resumeReading()
        client.server.stats.tunnels += 1
        if client.connection.inputCount > 0 { clientReadable() }
    }

    /// Bytes held for a side that does not read (the other side pauses above it); also the most
    /// one read or write moves.
    static let highWater = 256 * 1024

    /// The answer to a CONNECT that was accepted.
    static let acceptedResponse = "HTTP/1.1 200 Connection Established\r\nVia: 1.1 sluice\r\n\r\n"

    // MARK: - Relay

    func clientReadable() {
        guard isOpen, let upstream else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        // Everything the socket holds, not libevent's 4 KiB per wakeup.
        if upstream.outputCount < Tunnel.highWater { client.connection.readAvailable(upTo: Tunnel.highWater) }
        if let parentTLS {
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

    /// The far side ended (end of stream, or close_notify from a TLS parent) while plain text
    /// was still waiting for the client: the end is passed on once it is all written.
    private var farEnded = false

    private func upstreamReadable() {
        switch phase {
        case .securing: return secure()
        case .asking: return parentAnswered()
        case .open: break
        case .connecting, .finished: return
        }
        guard let upstream else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        if client.connection.outputCount < Tunnel.highWater { upstream.readAvailable(upTo: Tunnel.highWater) }
        guard let parentTLS else {
            bytesDown += Int64(upstream.moveInput(to: client.connection))
            if client.connection.outputCount >= Tunnel.highWater { upstream.pauseReading() }
            return
        }
        // Plain text from the parent's TLS, as much as the client's buffer takes.
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
        } else if farEnded || parentTLS.inputEnded {
            upstreamEnded()
        }
    }

    /// Nothing more comes from the far side: the client's side is shut for writing.
    private func upstreamEnded() {
        guard !upstreamDone else { return }
        upstreamDone = true
        client.connection.shutdownWrite()
        if clientDone { finish(error: nil) }
    }

    func clientDrained() {
        guard let upstream, !upstreamDone else { return }
        lastActivity = EventLoop.monotonicNanoseconds()
        upstream.resumeReading()
        // Plain text already decrypted gets no read event of its own.
        if parentTLS != nil { upstreamReadable() }
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
            if !isOpen { return finish(error: nil) }
            parentTLS?.closeWriting()
            upstream?.shutdownWrite()
            if upstreamDone { finish(error: nil) }
        case .error, .timeout:
            finish(error: nil)
        case .connected:
            break
        }
    }

    private func finish(error: SluiceError?) {
        guard !isFinished else { return }
        phase = .finished
        idleTimer?.cancel()
        connectTimer?.cancel()
        parentTLS?.close()  // close_notify: the parent's session stays resumable
        upstream?.close()
        upstream = nil
        parentTLS = nil
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
        case (.endOfStream, _):
            guard parentTLS != nil else { return upstreamEnded() }
            farEnded = true
            upstreamReadable()
        case (.error(let code, _), .securing), (.error(let code, _), .asking):
            parentFailed("the connection to it failed before the tunnel opened (error \(code))")
        case (.error(let code, let resolving), .connecting):
            let detail = resolving ? DNSResolver.describe(code) : "error \(code)"
            if parent != nil { return parentFailed("could not connect to it (\(detail))") }
            failBeforeOpen(
                resolving
                    ? .upstreamFailed(reason: .resolveFailed(host: host))
                    : .upstreamFailed(reason: .connectFailed(host: "\(host):\(port)", detail: detail)))
        case (.error, _), (.timeout, _):
            finish(error: nil)
        }
    }
}
