import EventIO

/// One client socket: reads request heads, runs one ``Exchange`` at a time (pipelined requests
/// wait their turn), keeps the connection alive between them, and enforces client timeouts.
final class ClientConnection {
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
        case closed
    }

    let connection: Connection
    unowned let server: ProxyServer
    let peerText: String
    /// Whether the client is on this machine (a loopback peer).
    let isLocal: Bool
    private(set) var state = State.idle
    private var parser: RequestParser
    private var headerTimer: Timer?
    /// The client sent FIN.
    private(set) var inputClosed = false
    /// The byte stream exchanges read from and write to.
    var stream: any ClientStream { connection }
    /// Set while the request body is still being read.
    private var bodyPending = false

    init(connection: Connection, server: ProxyServer) {
        self.connection = connection
        self.server = server
        peerText = connection.peer?.description ?? "?"
        isLocal = connection.peer?.unmapped.isLoopback ?? true
        parser = RequestParser(limits: server.parserLimits)
        inputHighWater = max(256 * 1024, server.parserLimits.maxHeaderBytes + 16 * 1024)
        connection.delegate = self
        connection.setNoDelay()
        connection.setWatermarks(readHigh: inputHighWater, writeLow: ClientConnection.outputLowWater)
        enterIdle()
    }

    var isIdle: Bool {
        if case .idle = state { return connection.inputCount == 0 }
        return false
    }

    var isClosed: Bool { if case .closed = state { true } else { false } }

    // MARK: - Reading requests

    private func enterIdle() {
        state = .idle
        let timeouts = server.configuration.timeouts
        connection.setTimeouts(readMilliseconds: timeouts.clientIdle, writeMilliseconds: timeouts.clientBody)
    }

    /// Parses buffered input into requests while the connection is free.
    private func processInput() {
        while true {
            switch state {
            case .idle, .readingHead: break
            default: return
            }
            guard connection.inputCount > 0 else { return }
            if case .idle = state {
                state = .readingHead
                armHeaderTimer()
            }
            let limit = server.parserLimits.maxHeaderBytes + 4
            let outcome = connection.withInput(upTo: limit) { parser.parse($0) }
            switch outcome {
            case .needMore:
                if inputClosed { return close() }
                return
            case .failure(let error):
                headerTimer?.cancel()
                return reject(error)
            case .head(let request, let consumed):
                headerTimer?.cancel()
                connection.drainInput(consumed)
                begin(request)
            }
        }
    }

    private func armHeaderTimer() {
        if headerTimer == nil {
            headerTimer = Timer(loop: server.loop) { [unowned self] in
                if case .readingHead = self.state { self.reject(.badRequest(reason: .timedOut)) }
            }
        }
        headerTimer?.schedule(milliseconds: server.configuration.timeouts.clientHeader)
    }

    private func begin(_ request: ProxyRequest) {
        server.stats.requests += 1
        if case .authority(let host, let port) = request.target {
            return beginTunnel(request, host: host, port: port)
        }
        let exchange = Exchange(client: self, env: server.environment, request: request)
        state = .exchanging(exchange)
        bodyPending = request.bodyFraming != .none
        let timeouts = server.configuration.timeouts
        connection.setTimeouts(
            readMilliseconds: bodyPending ? timeouts.clientBody : 0, writeMilliseconds: timeouts.clientBody)
        exchange.start()
    }

    private func beginTunnel(_ request: ProxyRequest, host: String, port: UInt16) {
        // A refused CONNECT closes: the client may already be sending the tunnel's first bytes
        // (a TLS ClientHello), which must not be read as the next request.
        if let refusal = server.policy.connectRefusal(host: host, port: port, localClient: isLocal) {
            return rejectRequest(request, refusal, closing: true)
        }
        guard request.bodyFraming == .none else {
            return rejectRequest(request, .badRequest(reason: .malformed("CONNECT with a body")), closing: true)
        }
        let tunnel = Tunnel(client: self, host: host, port: port, request: request)
        state = .tunnelling(tunnel)
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        tunnel.start()
    }

    /// Answers a parsed request with a problem without contacting anyone.
    private func rejectRequest(_ request: ProxyRequest, _ error: SluiceError, closing: Bool = false) {
        let exchange = Exchange(client: self, env: server.environment, request: request)
        if closing { exchange.output.keepAlive = false }
        state = .exchanging(exchange)
        exchange.fail(error)
    }

    /// Answers an unparseable request with a problem and closes.
    func reject(_ error: SluiceError) {
        let problem = Problem(error)
        connection.write(ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: server.date.now))
        server.log(
            ExchangeRecord(
                client: peerText, method: "-", url: "-", status: problem.status,
                bytesSent: Int64(problem.body.utf8.count),
                duration: 0, upstreamTime: nil, error: error, aborted: false))
        closeAfterFlush()
    }

    func requestBodyDidEnd() {
        bodyPending = false
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: server.configuration.timeouts.clientBody)
    }

    // MARK: - After an exchange

    func exchangeDidFinish(_ exchange: Exchange, closeConnection: Bool, abort: Bool) {
        guard case .exchanging(let current) = state, current === exchange else { return }
        if abort { return resetConnection() }
        if closeConnection || inputClosed { return closeAfterFlush() }
        bodyPending = false
        parser.reset()
        enterIdle()
        if server.isShuttingDown, connection.inputCount == 0 { return closeAfterFlush() }
        processInput()
    }

    /// A response head waits for the body's first bytes so that both leave in one write; if none
    /// came in this loop turn (an origin that sends its head and then thinks), it goes alone.
    func sendHeldHeadAtEndOfTurn() { headFlush.fireSoon() }
    private lazy var headFlush = Timer(loop: server.loop) { [unowned self] in
        if case .exchanging(let exchange) = state { exchange.sendHeldHead() }
    }

    /// The tunnel ended: bytes already relayed to the client still go out before the close.
    func tunnelDidFinish() { closeAfterFlush() }

    // MARK: - Closing

    func closeAfterFlush() {
        guard !isClosed else { return }
        state = .closed
        headerTimer?.cancel()
        connection.closeAfterFlush()
        server.connectionDidClose(self)
    }

    func close() {
        guard !isClosed else { return }
        state = .closed
        headerTimer?.cancel()
        connection.close()
        server.connectionDidClose(self)
    }

    private func resetConnection() {
        guard !isClosed else { return }
        state = .closed
        headerTimer?.cancel()
        connection.reset()
        server.connectionDidClose(self)
    }

    /// Shutdown: idle connections close now; busy ones after their exchange.
    func shutdownIfIdle() { if isIdle { close() } }
}

extension ClientConnection: ExchangeHost {}

extension ClientConnection: ConnectionDelegate {
    func connectionDidRead(_ connection: Connection) {
        switch state {
        case .idle, .readingHead: processInput()
        case .exchanging(let exchange): exchange.clientDataAvailable()
        case .tunnelling(let tunnel): tunnel.clientReadable()
        case .closed: connection.drainInput(connection.inputCount)
        }
    }

    func connectionDidDrain(_ connection: Connection) {
        switch state {
        case .exchanging(let exchange): exchange.clientDrained()
        case .tunnelling(let tunnel): tunnel.clientDrained()
        default: break
        }
    }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        switch (state, event) {
        case (.tunnelling(let tunnel), _):
            tunnel.clientEvent(event)
        case (.idle, .timeout):
            close()
        case (.readingHead, .timeout):
            reject(.badRequest(reason: .timedOut))
        case (.exchanging(let exchange), .timeout(let reading)):
            exchange.clientFailed(reading ? .badRequest(reason: .timedOut) : nil)
        case (.exchanging(let exchange), .endOfStream):
            inputClosed = true
            if bodyPending {
                exchange.clientFailed(
                    .badRequest(reason: .malformed("the client closed the connection during the request body")))
            } else {
                connection.pauseReading()
            }
        case (.exchanging(let exchange), .error):
            exchange.clientFailed(nil)
        case (.readingHead, .endOfStream):
            inputClosed = true
            processInput()
            if case .readingHead = state { close() }
        case (_, .endOfStream), (_, .error):
            inputClosed = true
            if connection.outputCount == 0 { close() } else { closeAfterFlush() }
        default:
            break
        }
    }
}
