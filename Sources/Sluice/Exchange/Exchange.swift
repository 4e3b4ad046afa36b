import EventIO

/// The path of one client request, in order (Varnish's `CNT_Request`, for a forward proxy):
///
/// 1. **Route** — the target must be an absolute http(s) URL or a CONNECT authority that policy allows;
///    the first matching rule (or `defaults`) gives the exchange its ``Rule``.
/// 2. **Answer locally** — `Max-Forwards: 0` on TRACE/OPTIONS.
/// 3. **Fetch** — an ``UpstreamTask`` on the ``Session``; the request body streams up as libcurl asks.
/// 4. **Validate** — at the response headers: in enforce mode the rule's ``ValidationGate`` cancels
///    the transfer (502 problem); in report mode the response is marked (`Sluice-Validation`).
/// 5. **Transform** — JSON null stripping on delivery, when the rule or the client asked for it.
/// 6. **Respond** — the head as soon as the hooks allowed it, the body with backpressure.
/// 7. **Finish** — one ``ExchangeRecord`` for the monitors; the connection decides keep-alive.
///
/// Lookup and store arrive between 3 and 4; each step's detail lives in its own folder.
final class Exchange {
    unowned let client: ClientConnection
    let request: ProxyRequest
    let startTime = EventLoop.monotonicNanoseconds()
    var task: UpstreamTask?
    var body: RequestBody
    var framing: ResponseWriter.Framing = .none
    /// Bytes of the response reached the client (or its socket buffer).
    var headSent = false
    /// A response head not yet written (it leaves with the first body bytes).
    var pendingHead: [UInt8]?
    /// Interim (1xx) responses passed on to the client.
    var interimSent = 0
    var responseComplete = false
    var keepAlive: Bool
    var status = 0
    var bytesSent: Int64 = 0
    /// The body length announced to the client (`Content-Length` framing), else 0.
    var bodyLength: Int64 = 0
    var error: SluiceError?
    var aborted = false
    var waitingForBody = false
    var pausedForClient = false
    var continueSent = false
    /// The rule that applies (the defaults when none matched).
    var rule: Rule
    var ruleMatched = false
    /// Null stripping asked for by the rule or by `Sluice-Strip-Nulls`.
    var stripMode: NullStripper.Mode?
    /// The body held for stripping.
    var stripping: NullStrippingDelivery?
    /// `Sluice-Validation` members for the response head.
    var marks: [String] = []
    var validationFailure: String?
    var transformNote: String?
    /// The cache key (normalised URL) when the cache takes part in this exchange.
    var cacheKey: String?
    /// `Cache-Status` for the response (RFC 9211).
    var cacheStatus: String?
    /// When the request went upstream (RFC 9111 §4.2.3 `request_time`).
    var cacheRequestTime: Double = 0
    /// The entry being written for this response.
    var cacheWriter: CacheWriter?
    /// The stored response being served, and the next body chunk.
    var cachedBody: (entry: Int64, size: Int64, next: Int64, sent: Int64)?
    /// The head being delivered comes from the cache (hop-by-hop fields were removed when it was stored).
    var headFromCache = false
    /// The whole stored body, when the hot set holds it.
    var cachedBytes: [UInt8]?
    /// A stale entry being revalidated, and the conditional fields sent for it.
    var revalidation: (entry: CacheStore.Entry, conditions: [(String, String)])?
    /// The entry a 304 refreshed (served when the upstream task completes).
    var revalidated: CacheStore.Entry?
    /// A stored response to serve if the origin fails (`stale-if-error`, `serve_stale_on_error`).
    var staleFallback: CacheStore.Entry?
    /// The origin's 5xx status when it is answered by `staleFallback` at completion.
    var staleTrigger: Int?
    /// The stale entry being revalidated says `must-revalidate`: no origin means 504 (§5.2.2.2).
    var mustRevalidateStale = false
    /// Collapsed forwarding: this exchange fetches for waiters / waits / has waited.
    var leadsCollapse = false
    var waitingForCollapse = false
    var collapsed = false
    var collapseTimer: Timer?
    /// The request said `no-cache` (or `Pragma: no-cache`).
    var requestNoCache = false
    /// The first lookup's `fwd` reason, reported with `collapsed`.
    var collapsedForward: String?
    /// The rule's enforce-mode gate and will-cache hook.
    var ruleGate: (any ResponseHandler)?
    var ruleCacher: (any CachedResponseHandler)?
    /// The request as sent upstream.
    var upstreamRequest: UpstreamRequest?
    /// The request as it would be forwarded (built when first needed: a hit may never need it).
    lazy var forwardRequest: UpstreamRequest = {
        var upstream = Forwarding.upstreamRequest(for: request, url: targetURL!)
        upstream.fromLocalClient = client.isLocal
        return upstream
    }()
    /// The target URL (set by Route).
    var targetURL: TargetURL?
    private(set) var finished = false

    init(client: ClientConnection, request: ProxyRequest) {
        self.client = client
        self.request = request
        body = RequestBody(framing: request.bodyFraming, limits: client.server.parserLimits)
        keepAlive = request.wantsKeepAlive && !client.server.isShuttingDown
        rule = client.server.ruleBook.defaults
    }

    /// Runs the steps.
    func start() {
        // 1. Route.
        let url: TargetURL
        switch request.target {
        case .absolute(let target):
            url = target
        case .origin, .asterisk:
            return fail(.badRequest(reason: .notAProxyRequest))
        case .authority:
            return fail(.badRequest(reason: .malformed("CONNECT is handled by the tunnel")))
        }
        if let refusal = client.server.policy.refusal(for: url, localClient: client.isLocal) { return fail(refusal) }
        let book = client.server.ruleBook
        if !book.rules.isEmpty || book.defaults.accept != nil || book.defaults.cache != nil {
            let resolved = book.resolve(method: request.method, host: url.host, path: url.pathAndQuery)
            (rule, ruleMatched, ruleGate, ruleCacher) = (
                resolved.rule, resolved.matched, resolved.gate, resolved.cacher
            )
        }
        stripMode = Exchange.stripping(requested: request.headers["sluice-strip-nulls"], rule: rule.stripJSONNulls)
        if let expectation = request.headers["expect"], !request.expectsContinue {
            return fail(.badRequest(reason: .unsupportedExpectation(expectation)))
        }

        // 2. Answer locally.
        if let forwards = Forwarding.maxForwards(request), forwards == 0,
            request.method == "TRACE" || request.method == "OPTIONS"
        {
            return answerLocally(url: url)
        }

        targetURL = url
        proceed(url: url)
    }

    /// Steps 3 and 4 (again for a collapsed waiter the fetch it waited for released).
    func proceed(url: TargetURL) {
        // 3. Lookup: a stored response may answer (or `only-if-cached` ends here), or another
        //    exchange is already fetching this URL.
        if let cache = client.server.cache {
            if lookup(url: url) || joinCollapsedFetch() { return }
            if cacheKey != nil { cache.countMiss() }
        }
        var upstream = forwardRequest
        if let (_, conditions) = revalidation {
            for (name, value) in conditions { upstream.headers.set(name, value) }
        }
        upstreamRequest = upstream

        // 4. Fetch.
        let task = client.server.session.makeTask(upstream, delegate: self, hooks: fetchHooks())
        self.task = task
        task.start()
    }

    /// The session's hooks, with the rule's where the session has none.
    func fetchHooks() -> UpstreamTask.Hooks {
        var hooks = client.server.hooks
        if hooks.responseHandler == nil, let ruleGate { hooks.responseHandler = ruleGate }
        if hooks.redirectHandler == nil, let policy = rule.redirects {
            hooks.redirectHandler = Redirector(policy: policy)
        }
        if hooks.cachedResponseHandler == nil, let ruleCacher { hooks.cachedResponseHandler = ruleCacher }
        return hooks
    }

    /// The stripping mode for a request: `Sluice-Strip-Nulls: 1|true|all` asks, `0|false` declines, else the rule's.
    static func stripping(requested: String?, rule: NullStripper.Mode?) -> NullStripper.Mode? {
        guard let requested else { return rule }
        switch requested.trimmingOWS().lowercased() {
        case "1", "true", "yes", "on", "members": return rule == .all ? .all : .members
        case "all": return .all
        case "0", "false", "no", "off": return nil
        default: return rule
        }
    }

    /// More client input arrived (request body bytes).
    func clientDataAvailable() {
        guard waitingForBody else { return }
        waitingForBody = false
        task?.resume()
    }

    /// The client's output drained below its low-water mark.
    func clientDrained() {
        guard pausedForClient else { return }
        pausedForClient = false
        if cachedBody != nil { return pumpCachedBody() }
        task?.resume()
    }

    /// The client went away or stalled: stop the upstream transfer.
    func clientFailed(_ reason: SluiceError?) {
        error = error ?? reason
        aborted = headSent && !responseComplete
        cachedBody = nil
        cachedBytes = nil
        abandonCacheWriter()
        if waitingForCollapse, let cacheKey {
            waitingForCollapse = false
            collapseTimer?.cancel()
            collapseTimer = nil
            client.server.collapser.leave(cacheKey, self)
        }
        task?.cancel(reason ?? .badRequest(reason: .malformed("client closed the connection")))
        task = nil
        finish(closeConnection: true)
    }

    // MARK: - Answers without an origin

    private func answerLocally(url: TargetURL) {
        status = 200
        responseComplete = true
        var headers = HTTPFields()
        var text = ""
        if request.method == "TRACE" {
            text = request.requestLine + "\r\n"
            for field in request.headers
            where !["authorization", "cookie", "proxy-authorization"].contains(where: field.hasName) {
                text += field.name + ": " + field.value + "\r\n"
            }
            text += "\r\n"
            headers.append(name: "Content-Type", value: "message/http")
        } else {
            headers.append(name: "Allow", value: "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT")
        }
        headers.append(name: "Content-Length", value: String(text.utf8.count))
        headers.append(name: "Date", value: client.server.date.now)
        headers.append(name: "Via", value: "1.1 sluice")
        if !keepAlive { headers.append(name: "Connection", value: "close") }
        client.connection.write(ResponseWriter.head(status: 200, reason: "OK", headers: headers))
        client.connection.write(text)
        bytesSent = Int64(text.utf8.count)
        headSent = true
        finishIfDone()
    }

    /// Answers with a problem (or, after the head was sent, cuts the connection).
    func fail(_ failure: SluiceError) {
        error = failure
        pendingHead = nil
        if headSent {
            aborted = true
            return finish(closeConnection: true)
        }
        let problem = Problem(failure, url: requestURLText)
        status = problem.status
        let bodyUnread = !body.isComplete
        if problem.closesConnection || bodyUnread { keepAlive = false }
        client.connection.write(
            ResponseWriter.problem(
                problem, keepAlive: keepAlive, headOnly: request.method == "HEAD", date: client.server.date.now,
                cacheStatus: cacheStatus))
        headSent = true
        responseComplete = true
        bytesSent = request.method == "HEAD" ? 0 : Int64(problem.body.utf8.count)
        finish(closeConnection: !keepAlive)
    }

    /// The URL for problems and logs; computed once.
    lazy var requestURLText: String = {
        if case .absolute(let url) = request.target { return url.description }
        return request.rawTarget
    }()

    // MARK: - Finish

    func finishIfDone() {
        guard responseComplete else { return }
        // The next request on the connection starts after this body: unread bytes mean close.
        finish(closeConnection: !keepAlive || !body.isComplete)
    }

    func finish(closeConnection: Bool) {
        guard !finished else { return }
        finished = true
        releaseCollapsedWaiters()
        let duration = Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9
        let timeline = task?.timeline(exchangeStart: startTime, complete: duration)
        let record = ExchangeRecord(
            client: client.peerText, method: request.method, url: requestURLText, status: status,
            bytesSent: bytesSent, duration: duration,
            upstreamTime: task?.timeToHead, error: error, aborted: aborted, rule: ruleMatched ? rule.name : nil,
            validationFailure: validationFailure, transform: transformNote, cacheStatus: cacheStatus,
            timeline: timeline)
        client.server.session.eventMonitor.exchangeDidComplete(record)
        client.exchangeDidFinish(self, closeConnection: closeConnection, abort: aborted && framing == .close)
    }
}
