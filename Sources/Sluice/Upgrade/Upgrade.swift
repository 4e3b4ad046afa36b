import EventIO
import TLS

/// An exchange whose request asks to switch protocols (RFC 9110 §7.8): a WebSocket handshake
/// (RFC 6455), plain or inside an intercepted tunnel, or any other `Upgrade`. It goes to the
/// origin on a connection of its own (directly or through the parent, TLS for `https://`
/// origins with the rule's trust and pins) with its upgrade fields; a `101` turns it into a relay
/// in both directions with backpressure, half-close and the tunnel idle limit, WebSocket frames
/// read on the way (``WebSocketFrames``: messages to `/events`, the page and the counters,
/// nothing held); any other answer is an ordinary response, validated against the rule,
/// logged and passed back, and the connection closes after it.
final class Upgrade {
    unowned let client: ClientConnection
    /// The request as it goes to the origin (the rule's `rewrite.request` applied, and what a
    /// person edited at a request breakpoint).
    var request: ProxyRequest
    /// The client's URL (logs, problems), and where the handshake goes: the rule's map remote
    /// (`upstream:`) applied, as for any request (or the URL a person edited at a breakpoint).
    let url: TargetURL
    var target: TargetURL
    /// The `Host` sent: the target's, or the client's when the mapping keeps it.
    var host: String
    let rule: Rule
    /// The rule's name when one matched (for the log).
    let ruleName: String?
    let id: Int
    let env: ExchangeEnvironment
    private let tunnels: TunnelEnvironment
    private let startTime = EventLoop.monotonicNanoseconds()
    private var responseTimer: Timer?
    /// What the log line says: the status sent, bytes to the client, a validation failure.
    var status = 0
    var bytesDown: Int64 = 0
    private var validationFailure: String?
    private var capture: ExchangeCapture?
    private var switchedAt: UInt64?
    /// What message breakpoints did (`send message paused at chat: edited, sent`).
    var breakpointNotes: String?
    /// Where a refusal's chunked body is decoded to find its end (the decoded bytes are not used).
    private var scratch: [UInt8] = []
    /// Interim heads passed on before the `101` or the answer.
    private var interimSent = 0

    private(set) var phase = Phase.idle

    init(
        client: ClientConnection, env: ExchangeEnvironment, tunnels: TunnelEnvironment, request: ProxyRequest,
        url: TargetURL, route: RouteDecision
    ) {
        self.client = client
        self.env = env
        self.tunnels = tunnels
        var request = request
        if let rewrite = route.rule.rewrite { rewrite.request.apply(to: &request.headers) }
        self.request = request
        self.url = url
        let target = route.rule.upstream.map { $0.map(url) } ?? url
        self.target = target
        host = route.rule.upstream?.keepsHost == true ? url.authority : target.authority
        rule = route.rule
        ruleName = route.matchedName
        id = env.nextExchangeID()
    }

    private var isWebSocket: Bool { UpgradeHandshake.offered(request.headers).contains("websocket") }

    func start() {
        if let watcher = env.watcher, watcher.isWatching {
            capture = ExchangeCapture(request: request.headers, bodyRoom: 0)
        }
        client.connection.pauseReading()
        if env.breakpoints.pausesRequests, pauseAtBreakpoint() {
            phase = .paused
            // Read while it waits, so that a client that leaves is noticed (its item goes); what
            // it sends meanwhile waits in the input (bounded by the read high-water mark).
            client.connection.resumeReading()
            return
        }
        dial()
    }

    func dial() {
        client.connection.pauseReading()
        let parent = env.parents.parent(host: target.host, https: target.scheme == "https", rule: rule.proxy)
        let dialer = Dialer(
            environment: tunnels, host: target.host.contains(":") ? "[\(target.host)]" : target.host, port: target.port,
            parent: parent, localClient: client.isLocal
        ) { [unowned self] outcome in
            switch outcome {
            case .opened(let dialed): self.opened(Far(upstream: dialed.upstream, parentTLS: dialed.parentTLS))
            case .failed(let error): self.failBeforeSwitch(error)
            }
        }
        phase = .dialing(dialer)
        dialer.start()
    }

    // MARK: - Before the switch

    private func opened(_ dialed: Far) {
        var far = dialed
        far.upstream.delegate = self
        far.upstream.setNoDelay()
        far.upstream.setWatermarks(readHigh: Relay.highWater, writeLow: ClientConnection.outputLowWater)
        // No answer within the upstream timeout is a 504, as for any request.
        let responseTimer = Timer(loop: env.loop) { [unowned self] in
            switch self.phase {
            case .securing, .awaitingHead:
                self.failBeforeSwitch(
                    .upstreamFailed(
                        reason: .timedOut(detail: "The origin did not answer the upgrade of \(self.url) in time.")))
            default: return
            }
        }
        responseTimer.schedule(milliseconds: max(1000, tunnels.connectLimit * 3))
        self.responseTimer = responseTimer
        guard target.scheme == "https" else { return sendHead(far) }
        do {
            let context = try env.originTLS.context(for: rule.tls)
            far.originTLS = TLSStream(
                raw: far.parentTLS ?? far.upstream, session: try context.makeSession(host: target.host))
            phase = .securing(far)
            secure()
        } catch {
            failBeforeSwitch(.upstreamFailed(reason: .tlsFailed(detail: "\(error)")))
        }
    }

    func secure() {
        guard case .securing(let far) = phase, let tls = far.originTLS else { return }
        switch tls.advance() {
        case .handshaking:
            return
        case .established, .open:
            if let pins = rule.tls?.pins, !pins.isEmpty, !pins.contains(tls.session.peerKeyPin ?? "") {
                return failBeforeSwitch(.upstreamFailed(reason: .pinMismatch(host: target.host)))
            }
            sendHead(far)
        case .failed(.certificateUntrusted(let reason)):
            failBeforeSwitch(.upstreamFailed(reason: .certificateInvalid(host: target.host, detail: reason)))
        case .failed(.protocolError(let reason)), .failed(.certificateRejected(let reason)),
            .failed(.noCertificate(let reason)):
            failBeforeSwitch(.upstreamFailed(reason: .tlsFailed(detail: reason)))
        }
    }

    private func sendHead(_ far: Far) {
        far.stream.write(UpgradeHandshake.upstreamHead(request, url: target, host: host))
        phase = .awaitingHead(far, ResponseHeadParser(maxHeaderBytes: env.parserLimits.maxHeaderBytes))
        readHead()
    }

    /// Reads the origin's head line by line.
    func readHead() {
        while case .awaitingHead(let far, var parser) = phase {
            let stream = far.stream
            guard stream.inputCount > 0 else { return }
            let limit = env.parserLimits.maxHeaderBytes + 4
            let read: (ResponseHeadParser.Step, Int)? = stream.withInput(upTo: limit) { bytes in
                guard let newline = bytes.firstIndex(of: 0x0A) else {
                    return bytes.count >= limit
                        ? (.refused("The origin's response header section is too large."), 0) : nil
                }
                return (parser.consume(UnsafeRawBufferPointer(rebasing: bytes[...newline])), newline + 1)
            }
            guard let (step, consumed) = read else { return }
            stream.drainInput(consumed)
            phase = .awaitingHead(far, parser)
            switch step {
            case .more:
                continue
            case .interim(let head) where head.status == 101:
                return switchProtocols(far, head)
            case .interim(let head):
                // 102, 103: passed on (RFC 9110 §15.2), a few; a 100 answers no expectation of
                // the client's (an upgrade has no body). The 101 or the final answer follows.
                if head.status != 100, interimSent < Exchange.interimLimit {
                    interimSent += 1
                    let interim = Forwarding.clientInterim(head)
                    let bytes = ResponseWriter.head(
                        status: interim.status, reason: interim.reason, headers: interim.headers)
                    client.stream.write(bytes)
                    bytesDown += Int64(bytes.count)
                }
                continue
            case .final(let head):
                return passBack(far, head)
            case .refused(let detail):
                return failBeforeSwitch(.upstreamFailed(reason: .badResponse(detail: detail)))
            case .notHTTP:
                return failBeforeSwitch(
                    .upstreamFailed(reason: .badResponse(detail: "The origin did not answer the upgrade with HTTP.")))
            }
        }
    }

    /// The origin switched: the `101` goes to the client and the relay starts.
    private func switchProtocols(_ far: Far, _ head: ResponseHead) {
        responseTimer?.cancel()
        if let refusal = UpgradeHandshake.refusal(of: head, offered: UpgradeHandshake.offered(request.headers)) {
            return failBeforeSwitch(.upstreamFailed(reason: .badResponse(detail: refusal)))
        }
        let relay = Relay(
            client: Relay.Side(socket: client.connection, layers: client.inside?.tls.map { [$0] } ?? []),
            far: Relay.Side(socket: far.upstream, layers: [far.originTLS, far.parentTLS].compactMap { $0 }),
            loop: env.loop, idleLimit: tunnels.idleLimit
        ) { [unowned self] in self.finish() }
        if isWebSocket {
            // Frame readers per direction: each message to /events, the page and the counters.
            let compression = UpgradeHandshake.compression(head)
            var sent = WebSocketFrames(
                direction: .send, deflate: compression.enabled, noContextTakeover: compression.clientNoContextTakeover)
            var received = WebSocketFrames(
                direction: .receive, deflate: compression.enabled,
                noContextTakeover: compression.serverNoContextTakeover)
            relay.observeUp = { [unowned self] segment in sent.observe(segment) { self.observed($0) } }
            relay.observeDown = { [unowned self] segment in received.observe(segment) { self.observed($0) } }
            gateMessages(relay)
        }
        let bytes = UpgradeHandshake.switchingHead(head)
        capture?.head(bytes)
        status = 101
        client.stream.write(bytes)
        bytesDown += Int64(bytes.count)
        phase = .relaying(relay)
        switchedAt = EventLoop.monotonicNanoseconds()
        env.stats.upgrades += 1
        env.watcher?.upgradeDidSwitch(record())
        relay.start()
        // A client that ended its side after the handshake request: what it sent, then the end.
        if client.inputClosed { relay.clientEnded() }
    }

    /// The origin refused the upgrade: its answer goes back like any response (validated
    /// against the rule), and the connection closes after it.
    private func passBack(_ far: Far, _ head: ResponseHead) {
        responseTimer?.cancel()
        if let accept = rule.accept,
            let failure = ResponseValidator.validate(
                head, method: request.method, requestHeaders: request.headers, acceptance: accept, rule: rule.name)
        {
            if accept.onReject == .report {
                validationFailure = failure.detail
                env.stats.validationReported += 1
            } else {
                env.stats.validationRejected += 1
                return failBeforeSwitch(.validationFailed(failure))
            }
        }
        let originChunked = head.headers.tokens(.transferEncoding).last == "chunked"
        let originLength = head.headers[.contentLength].flatMap { Int64($0) }
        var (headers, framing) = Forwarding.clientResponse(
            head, request: request, date: env.date.now, keepAlive: false)
        // Like any answer through Sluice: an upgrade never consults the cache.
        headers.append(
            name: "Cache-Status", value: CacheStatus(.forward(.bypass), detail: "upgrade").description,
            code: .cacheStatus)
        var left: BodyLeft
        if framing == .none {
            left = .length(0)
        } else if originChunked {
            left = .chunked(ChunkedDecoder(allowsBlankAfterSize: true))  // an origin's body
        } else if let originLength {
            left = .length(originLength)
        } else {
            // Delimited by the origin's close: so it is for the client too.
            headers.remove(.transferEncoding)
            left = .untilClose
            framing = .close
        }
        let bytes = ResponseWriter.head(status: head.status, reason: head.reason, headers: headers)
        capture?.head(bytes)
        status = head.status
        client.stream.write(bytes)
        bytesDown += Int64(bytes.count)
        phase = .passingBack(far, left)
        passBody()
    }

    func passBody() {
        guard case .passingBack(let far, var left) = phase else { return }
        var ended = false
        while !ended, client.stream.outputCount < Relay.highWater, far.stream.inputCount > 0 {
            let moved = far.stream.withFirstInputSegment { segment -> Int in
                let take: Int
                (take, ended) = share(of: segment, &left)
                client.stream.write(UnsafeRawBufferPointer(rebasing: segment[..<take]), more: false)
                return take
            }
            far.stream.drainInput(moved)
            bytesDown += Int64(moved)
        }
        phase = .passingBack(far, left)
        if case .length(0) = left { ended = true }
        if ended { return finish() }
        if client.stream.outputCount >= Relay.highWater { far.upstream.pauseReading() }
    }

    /// How many of `segment`'s bytes belong to the refusal's body, and whether it ends with them.
    /// The bytes go on as they came (the client gets the origin's framing); a chunked body is
    /// decoded only to find its end.
    private func share(of segment: UnsafeRawBufferPointer, _ left: inout BodyLeft) -> (Int, Bool) {
        switch left {
        case .length(let remaining):
            let take = Int(min(Int64(segment.count), remaining))
            left = .length(remaining - Int64(take))
            return (take, remaining == Int64(take))
        case .chunked(var decoder):
            if scratch.count < segment.count { scratch = [UInt8](repeating: 0, count: segment.count) }
            guard let step = scratch.withUnsafeMutableBytes({ try? decoder.decode(segment, into: $0) }) else {
                return (segment.count, true)  // not chunked after all: what came goes, and the end
            }
            left = .chunked(decoder)
            return (step.consumed, step.finished)
        case .untilClose:
            return (segment.count, false)
        }
    }

    func failBeforeSwitch(_ error: SluiceError) {
        let problem = Problem(error, url: url.description)
        status = problem.status
        let bytes = ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: env.date.now)
        client.stream.write(bytes)
        bytesDown += Int64(bytes.count)
        finish(error: error)
    }

    // MARK: - The end

    private func record(error: SluiceError? = nil, aborted: Bool = false) -> ExchangeRecord {
        var record = ExchangeRecord(
            client: client.peerText, method: request.method, url: url.description, status: status,
            bytesSent: bytesDown, duration: Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9,
            upstreamTime: switchedAt.map { Double($0 - startTime) / 1e9 }, error: error, aborted: aborted)
        record.rule = ruleName
        record.validationFailure = validationFailure
        record.id = id
        record.capture = capture
        record.breakpoint = breakpointNotes
        return record
    }

    func finish(error: SluiceError? = nil, aborted: Bool = false) {
        let far: Far?
        switch phase {
        case .finished: return
        case .idle, .paused: far = nil
        case .dialing(let dialer):
            dialer.cancel()
            far = nil
        case .securing(let open), .awaitingHead(let open, _), .passingBack(let open, _): far = open
        case .relaying(let relay):
            bytesDown += relay.bytesDown
            relay.closeFar()
            far = nil
        }
        phase = .finished
        if breakpointNotes != nil { env.breakpoints.forget(exchange: id) }
        responseTimer?.cancel()
        far?.originTLS?.close()
        far?.parentTLS?.close()
        far?.upstream.close()
        client.upgradeDidFinish(record(error: error, aborted: aborted))
    }
}
