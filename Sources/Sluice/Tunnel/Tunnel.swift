import EventIO
import TLS

/// A CONNECT tunnel: opened to the origin (directly, or with the parent's own CONNECT or SOCKS5,
/// over TLS when the parent is `https://`), then a ``Relay``. Only the client's first bytes are
/// looked at, when they come before the far side said anything: plain HTTP (a `ws://`
/// WebSocket, a `curl -p http://…`) is handed back to the client connection, which serves it like
/// any request to the proxy.
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

    /// The look at the client's first bytes (``TunnelContent``).
    enum FirstBytes: Equatable {
        /// Nothing came from either side yet, or too little to tell.
        case awaited
        /// Not HTTP, or the far side spoke first: bytes are relayed as they are.
        case settled
    }

    private var phase = Phase.idle
    private var firstBytes: FirstBytes
    private let env: TunnelEnvironment
    private let startTime = EventLoop.monotonicNanoseconds()
    /// Gives up waiting for the client's first bytes to say what they are (a protocol that sends
    /// a few letters and waits).
    private var firstBytesTimer: Timer?

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
        // An interception that found no TLS looked at the first bytes already; with
        // `tunnel_plain_http: relay` nothing is looked at.
        firstBytes = answered || !environment.servesPlainHTTP ? .settled : .awaited
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
                self.becomeOpen(dialed)
            case .failed(let error):
                self.failBeforeOpen(error)
            }
        }
        phase = .dialing(dialer)
        client.connection.pauseReading()
        dialer.start()
    }

    private func failBeforeOpen(_ error: SluiceError) {
        phase = .finished
        let problem = Problem(error, url: "\(host):\(port)")
        if answered {
            log(status: problem.status, error: error)
            return client.closeAfterFlush()
        }
        let bytes = ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: env.date())
        client.connection.write(bytes)
        log(status: problem.status, error: error, bytesSent: Int64(bytes.count))
        client.closeAfterFlush()
    }

    private func log(status: Int, error: SluiceError?, bytesSent: Int64 = 0) {
        env.log(
            ExchangeRecord(
                client: client.peerText, method: "CONNECT", url: "\(host):\(port)", status: status,
                bytesSent: bytesSent,
                duration: Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9, upstreamTime: nil, error: error,
                aborted: false))
    }

    private func becomeOpen(_ dialed: Dialer.Dialed) {
        dialed.upstream.setNoDelay()
        // The far side spoke already (a greeting read with a parent's answer): not HTTP.
        if dialed.far.inputCount > 0 { firstBytes = .settled }
        let relay = Relay(
            client: Relay.Side(socket: client.connection),
            far: Relay.Side(socket: dialed.upstream, layers: dialed.parentTLS.map { [$0] } ?? []), loop: env.loop,
            idleLimit: env.idleLimit
        ) { [unowned self] in self.finish(error: nil) }
        phase = .open(relay)
        if !answered { client.connection.write(Tunnel.acceptedResponse) }
        env.stats.tunnels += 1
        relay.start(holdingClient: firstBytes == .awaited)
        if firstBytes == .awaited { clientReadable() }
    }

    /// The answer to a CONNECT that was accepted.
    static let acceptedResponse = "HTTP/1.1 200 Connection Established\r\nVia: 1.1 sluice\r\n\r\n"

    // MARK: - Events

    func clientReadable() {
        guard case .open(let relay) = phase else { return }
        if firstBytes == .awaited {
            client.connection.readAvailable(upTo: Relay.highWater)
            switch client.connection.withInput(upTo: TunnelContent.limit, { TunnelContent.classify($0) }) {
            case .needMore:
                if client.connection.inputCount > 0 { armFirstBytesTimer() }
                return
            case .http:
                return handOverToHTTP(relay)
            case .tls, .other:
                settleFirstBytes()
            }
        }
        relay.clientReadable()
    }

    private func settleFirstBytes() {
        firstBytes = .settled
        firstBytesTimer?.cancel()
    }

    private func armFirstBytesTimer() {
        guard firstBytesTimer == nil else { return }
        firstBytesTimer = Timer(loop: env.loop) { [unowned self] in
            guard self.firstBytes == .awaited else { return }
            self.settleFirstBytes()
            self.clientReadable()
        }
        firstBytesTimer?.schedule(milliseconds: Tunnel.firstBytesWait)
    }

    /// How long a prefix that could still be an HTTP request line is held.
    static let firstBytesWait = 1_000

    /// The client spoke HTTP inside the tunnel: the connection to the far side is not needed (each
    /// request gets its own upstream connection, through the rules, the cache and the contracts).
    private func handOverToHTTP(_ relay: Relay) {
        relay.closeFar()
        phase = .finished
        firstBytesTimer?.cancel()
        log(status: 200, error: nil)
        client.tunnelCarriesHTTP(ClientConnection.Authority(host: host, port: port))
    }

    func clientDrained() {
        if case .open(let relay) = phase { relay.clientDrained() }
    }

    func clientEvent(_ event: Connection.Event) {
        switch event {
        case .endOfStream:
            guard case .open(let relay) = phase else { return finish(error: nil) }
            if firstBytes == .awaited { settleFirstBytes() }
            relay.clientEnded()
        case .error, .timeout:
            finish(error: nil)
        case .connected:
            break
        }
    }

    private func finish(error: SluiceError?) {
        var bytesDown: Int64 = 0
        switch phase {
        case .finished: return
        case .open(let relay):
            bytesDown = relay.bytesDown
            if relay.spliced { env.stats.tunnelsSpliced += 1 }
            relay.closeFar()  // close_notify: the parent's session stays resumable
        case .dialing(let dialer): dialer.cancel()
        case .idle: break
        }
        phase = .finished
        firstBytesTimer?.cancel()
        log(status: 200, error: error, bytesSent: bytesDown)
        client.tunnelDidFinish()
    }
}

extension Tunnel: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) {
        guard case .open(let relay) = phase else { return }
        if firstBytes == .awaited {
            // The far side spoke first (SMTP, SSH): not HTTP, whatever the client sends.
            settleFirstBytes()
            relay.farReadable()
            return relay.clientReadable()
        }
        relay.farReadable()
    }

    func connectionDidDrain(_ connection: Connection) {
        if case .open(let relay) = phase { relay.farDrained() }
    }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (event, phase) {
        case (.endOfStream, .open(let relay)):
            if firstBytes == .awaited {
                settleFirstBytes()
                relay.clientReadable()  // what was held goes on
            }
            relay.farEnded()
        case (.connected, _):
            break
        case (.endOfStream, _), (.error, _), (.timeout, _):
            finish(error: nil)
        }
    }
}
