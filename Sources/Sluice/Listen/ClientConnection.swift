import EventIO
import Logging
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// One client socket: reads request heads, runs one ``Exchange`` at a time (pipelined requests
/// wait their turn), keeps the connection alive between them, and enforces client timeouts.
final class ClientConnection: TurnEndObserver {
    /// At or below this many unsent bytes, a paused response source resumes (it pauses above
    /// ``ResponseOutput/highWater``).
    static let outputLowWater = 16 * 1024
    /// Input buffered at most (the header limit plus room); reading pauses above it.
    let inputHighWater: Int

    enum State {
        case idle
        case readingHead
        case exchanging(Exchange)
        case tunnelling(Tunnel)
        /// A request that asked to switch protocols (WebSocket), relayed once the origin agreed.
        case upgrading(Upgrade)
        /// An intercepted client that chose HTTP/2: its streams are exchanges.
        case http2(HTTP2Connection)
        /// An intercepted CONNECT was answered; the first bytes tell TLS from anything else.
        case peeking(Authority, ProxyRequest)
        /// The client's TLS handshake with the leaf for its host; the key its refusal would be
        /// noted under (none when its ClientHello could not be read).
        case handshaking(Authority, TLSStream, PassthroughBook.Key?)
        case closed
    }

    /// The client's side of the byte stream, apart from what the connection does with it.
    enum Input: Equatable {
        /// Open; no request body is being read.
        case open
        /// Open, and the current request's body is still being read.
        case readingBody
        /// The client sent FIN: nothing more comes on this connection.
        case ended
    }

    /// The host and port of a CONNECT whose content Sluice serves.
    struct Authority {
        let host: String
        let port: UInt16
    }

    /// A CONNECT whose requests Sluice serves itself: they are for its authority.
    enum Inside {
        /// Intercepted: `https://` requests, over the TLS stream with the leaf for the host.
        case intercepted(TLSStream, Authority)
        /// The client spoke plain HTTP in the tunnel (a `ws://` WebSocket): `http://` requests.
        case plain(Authority)

        var authority: Authority {
            switch self {
            case .intercepted(_, let authority), .plain(let authority): authority
            }
        }

        var tls: TLSStream? { if case .intercepted(let tls, _) = self { tls } else { nil } }

        var scheme: String { tls == nil ? "http" : "https" }
    }

    let connection: Connection
    /// What it needs from the proxy.
    let env: ClientEnvironment
    let peerText: String
    /// Whether the client is on this machine (a loopback peer).
    let isLocal: Bool
    var state = State.idle
    private var parser: RequestParser
    var headerTimer: Timer?
    /// Gives up looking at an intercepted CONNECT's first bytes when they do not say what they are.
    var peekTimer: Timer?
    var input = Input.open
    /// Since when the idle read timeout has counted through a bodiless exchange, kept rather
    /// than changed (`nil`: it was changed, or no such exchange runs); see ``enterIdle()``.
    var idleTimeoutKeptSince: UInt64?
    /// When the socket was last read (monotonic nanoseconds): when its read timeout last started.
    var lastReadAt: UInt64 = 0
    /// The client sent FIN.
    var inputClosed: Bool { input == .ended }
    /// The byte stream requests are read from and responses written to: the socket, or the
    /// decrypted stream of an intercepted connection.
    var stream: any ClientStream
    /// The CONNECT this connection's requests came in, once an interception's handshake completed
    /// or plain HTTP was seen inside: requests are for its authority.
    var inside: Inside?

    init(connection: Connection, environment: ClientEnvironment) {
        self.connection = connection
        env = environment
        peerText = connection.peer?.description ?? "?"
        stream = connection
        isLocal = connection.peer?.unmapped.isLoopback ?? true
        parser = RequestParser(limits: env.exchanges.parserLimits)
        inputHighWater = max(256 * 1024, env.exchanges.parserLimits.maxHeaderBytes + 16 * 1024)
        connection.setOwningDelegate(self)  // let go of in `deinit`
        connection.setNoDelay()
        connection.setWatermarks(readHigh: inputHighWater, writeLow: ClientConnection.outputLowWater)
        state = .idle
        // Until its first byte a new connection has `client_header` (the slowloris guard), not
        // `client_idle`, which counts from a response it never had: a silent one holds its slot
        // 10 s by default, not a minute.
        let timeouts = env.timeouts
        let (header, idle) = (timeouts.clientHeader, timeouts.clientIdle)
        let first = header > 0 && (idle == 0 || header < idle) ? header : idle  // 0: none
        connection.setTimeouts(readMilliseconds: first, writeMilliseconds: timeouts.clientBody)
    }

    /// Its connection (which may outlive it: a lingering close) no longer points back here.
    deinit { connection.delegate = nil }

    var isIdle: Bool {
        if case .idle = state { return stream.inputCount == 0 }
        return false
    }

    var isClosed: Bool { if case .closed = state { true } else { false } }

    // MARK: - Reading requests

    /// Parses buffered input into requests while the connection is free.
    func processInput() {
        while true {
            switch state {
            case .idle, .readingHead: break
            default: return
            }
            guard stream.inputCount > 0 else { return }
            // A head's first bytes start the header timeout; it is armed only when they are not
            // the whole head (the usual head arrives whole: no timer to add and to take back).
            var headStarts = false
            if case .idle = state {
                state = .readingHead
                headStarts = true
            }
            let limit = env.exchanges.parserLimits.maxHeaderBytes + 4
            let outcome = stream.withInput(upTo: limit) { parser.parse($0) }
            switch outcome {
            case .needMore:
                if inputClosed { return close() }
                if headStarts { armHeaderTimer() }
                return
            case .failure(let error):
                headerTimer?.cancel()
                return reject(error)
            case .head(let request, let consumed):
                headerTimer?.cancel()
                stream.drainInput(consumed)
                begin(request)
            }
        }
    }

    /// Takes the parsed request (consumed: moved along to the exchange, not copied).
    private func begin(_ received: consuming ProxyRequest) {
        env.exchanges.stats.requests += 1
        var request = received
        // `proxy_auth`: every request to the proxy carries the credentials (inside an intercepted
        // tunnel, its CONNECT did).
        if inside == nil, !env.exchanges.policy.authorizes(request.headers[.proxyAuthorization]) {
            let policy = env.exchanges.policy
            if !request.asksForOnboarding {
                return rejectRequest(request, .proxyAuthenticationRequired, closing: request.bodyFraming != .none)
            }
            // The page asked of the proxy itself: a browser's own prompt answers a 401's challenge.
            if !policy.servesOnboardingFreely(to: connection.peer), !policy.authorizes(request.headers[.authorization])
            {
                return rejectRequest(request, .onboardingAuthenticationRequired, closing: request.bodyFraming != .none)
            }
        }
        if let inside {
            switch Interception.target(of: request, authority: inside.authority, scheme: inside.scheme) {
            case .success(let target): request.target = target
            case .failure(let error):
                Interception.nameOnConnection(&request, authority: inside.authority, scheme: inside.scheme)
                return rejectRequest(request, error)
            }
        } else if case .authority(let host, let port) = request.target {
            return beginTunnel(request, host: host, port: port)
        }
        var faults: FaultPlan?
        if UpgradeHandshake.isUpgrade(request), beginUpgrade(request, faults: &faults) { return }
        let hasBody = request.bodyFraming != .none
        let exchange = Exchange(client: self, env: env.exchanges, request: request)
        exchange.drawnFaults = faults
        state = .exchanging(exchange)
        if input != .ended { input = hasBody ? .readingBody : .open }
        setExchangeTimeouts()
        exchange.start()
    }

    /// A request asking to switch protocols, when its route forwards it: relayed on a
    /// connection of its own (``Upgrade``). Otherwise (refused, answered here) the ordinary
    /// exchange answers it.
    private func beginUpgrade(_ request: ProxyRequest, faults: inout FaultPlan?) -> Bool {
        let (route, answer) = RouteDecision.decide(
            request, policy: env.exchanges.policy, rules: env.exchanges.rules, localClient: isLocal)
        guard case .forward = answer, let url = route.url else { return false }
        // The rule's injected status or hold applies to the handshake as to any request: the
        // ordinary exchange answers it, with the faults drawn here (latency, bandwidth and resets
        // are not applied to a relay).
        if let plan = env.exchanges.faults.plan(for: route.entry), plan.status != nil || plan.holds {
            faults = plan
            return false
        }
        // Replaying offline: no recording holds an upgrade, so with `on_miss: fail` the ordinary
        // exchange answers it (a recorded answer for its URL, or the 504), never the origin.
        if env.exchanges.replayBook?.settings.onMiss == .fail { return false }
        let upgrade = Upgrade(
            client: self, env: env.exchanges, tunnels: env.tunnels(), request: request, url: url, route: route)
        state = .upgrading(upgrade)
        input = .open
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        upgrade.start()
        return true
    }

    /// The upgraded exchange ended: logged, and the connection closes (what was relayed goes out first).
    func upgradeDidFinish(_ record: ExchangeRecord) {
        env.log(record)
        closeAfterFlush()
    }

    /// Answers a parsed request with a problem without contacting anyone.
    func rejectRequest(_ request: ProxyRequest, _ error: SluiceError, closing: Bool = false) {
        let exchange = Exchange(client: self, env: env.exchanges, request: request)
        if closing { exchange.output.keepAlive = false }
        state = .exchanging(exchange)
        exchange.fail(error)
    }

    /// Answers an unparseable request with a problem and closes. The log line names the
    /// request line when one arrived whole (a head refused for its size, or cut by the header
    /// timeout after it), else `- -`.
    func reject(_ error: SluiceError) {
        let problem = Problem(error)
        let limit = env.exchanges.parserLimits.maxRequestLine + 2
        let line = stream.withInput(upTo: limit) { RequestParser.requestLine(in: $0, limit: limit) }
        stream.write(ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: env.exchanges.date.now))
        env.log(
            ExchangeRecord(
                client: peerText, method: line?.method ?? "-", url: line?.target ?? "-", status: problem.status,
                bytesSent: Int64(problem.body.utf8.count),
                duration: 0, upstreamTime: nil, error: error, aborted: false))
        closeAfterFlush()
    }

    func requestBodyDidEnd() {
        if input == .readingBody { input = .open }
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: env.timeouts.clientBody)
    }

    // MARK: - After an exchange

    func exchangeDidFinish(_ exchange: Exchange, closeConnection: Bool, abort: Bool) {
        guard case .exchanging(let current) = state, current === exchange else { return }
        if abort { return resetConnection() }
        if closeConnection || inputClosed { return closeAfterFlush() }
        input = .open
        parser.reset()
        enterIdle()
        if env.exchanges.isShuttingDown, stream.inputCount == 0 { return closeAfterFlush() }
        processInput()
    }

    /// A response head waits for the body's first bytes so that both leave in one write; if none
    /// came in this loop turn (an origin that sends its head and then thinks), it goes alone.
    /// (At the turn's end, not by a timer fired soon: that would count as other work waiting,
    /// and the response's own write would wait for the turn's end too, ``EventLoop/othersReady``.)
    /// (Asked twice in a turn, the second flush finds nothing held.)
    func sendHeldHeadAtEndOfTurn() { env.exchanges.loop.atTurnEnd(self) }

    func loopTurnDidEnd() {
        if case .exchanging(let exchange) = state { exchange.sendHeldHead() }
    }

    /// The tunnel ended: bytes already relayed to the client still go out before the close.
    func tunnelDidFinish() { closeAfterFlush() }

    // MARK: - Closing

    func closeAfterFlush() {
        guard !isClosed else { return }
        inside?.tls?.close()  // close_notify first
        state = .closed
        headerTimer?.cancel()
        peekTimer?.cancel()
        dropKeptIdleTimeout()
        connection.closeAfterFlush()
        env.closed(self)
    }

    func close() {
        guard !isClosed else { return }
        inside?.tls?.close()
        state = .closed
        headerTimer?.cancel()
        peekTimer?.cancel()
        connection.close()
        env.closed(self)
    }

    private func resetConnection() {
        guard !isClosed else { return }
        state = .closed
        headerTimer?.cancel()
        peekTimer?.cancel()
        connection.reset()
        env.closed(self)
    }

    /// Shutdown's grace is over: what still runs ends as a client's failure would end it
    /// (logged, `aborted`: one access line per exchange, the cut ones too), then the connection.
    func abandonAtShutdown() {
        if case .exchanging(let exchange) = state {
            exchange.clientFailed(.unavailable(reason: .shuttingDown))  // the line names why
        } else {
            connection(connection, didReceive: .error(code: ESHUTDOWN, resolving: false))
        }
        close()
    }

    /// Shutdown: idle connections close now; busy ones after their exchange.
    func shutdownIfIdle() {
        if case .http2(let http2) = state { return http2.shutdown() }
        if isIdle { close() }
    }
}

extension ClientConnection: ExchangeHost {}
