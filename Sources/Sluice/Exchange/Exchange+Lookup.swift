import EventIO

/// Lookup, before the fetch: RFC 9111 with a shared cache by default, RFC 5861's stale responses,
/// collapsed forwarding. `Cache-Status` (RFC 9211) names what happened.
extension Exchange {
    static let cacheName = "Sluice"
    /// The origin answers that count as an error for `stale-if-error` (RFC 5861 §4).
    static let errorStatuses: Set<Int> = [500, 502, 503, 504]

    var cacheSettings: Configuration.Cache { client.server.configuration.cache }

    /// Looks for a stored response; `true` when the exchange was answered (a hit or a 504).
    func lookup(url: TargetURL) -> Bool {
        guard let cache = client.server.cache else { return false }
        cacheRequestTime = client.server.clock()
        guard request.method == "GET" || request.method == "HEAD" else {
            cacheStatus = Exchange.cacheName + "; fwd=method"
            return false
        }
        let control = CacheControl(request.headers)
        let key = requestURLText  // the normalised URL, computed once per exchange
        if control.noStore {
            cacheStatus = Exchange.cacheName + "; fwd=request; detail=no-store"
            return false
        }
        cacheKey = key
        let noCache =
            control.noCache
            || (!request.headers.contains("cache-control") && request.headers.tokens("pragma").contains("no-cache"))
        requestNoCache = noCache
        let candidates = request.headers.contains("range") ? [] : cache.candidates(key: key)
        var forward = "uri-miss"
        if !candidates.isEmpty {
            forward = "vary-miss"
            if let entry = candidates.first(where: {
                $0.variant == CachePolicy.variant(names: $0.varyNames, request: request.headers)
            }) {
                if consider(entry, control: control, noCache: noCache, url: url) { return true }
                forward = noCache ? "request" : "stale"
            }
        }
        if control.onlyIfCached {
            cacheStatus = Exchange.cacheName + "; fwd=\(forward); detail=only-if-cached"
            fail(.upstreamFailed(reason: .timedOut(detail: "only-if-cached: no stored response fits the request.")))
            return true
        }
        cacheStatus = Exchange.cacheName + "; fwd=" + forward
        collapsedForward = collapsedForward ?? forward
        return false
    }

    /// A stored response that fits the request: serve it (fresh, or stale where the client or
    /// RFC 5861 allows), or have it revalidated and kept for `stale-if-error`. `true` = served.
    private func consider(
        _ entry: CacheStore.Entry, control: CacheControl, noCache: Bool, url: TargetURL
    ) -> Bool {
        let settings = cacheSettings
        let now = client.server.clock()
        let age = entry.age(at: now)
        let lifetime = entry.ttl ?? entry.facts.lifetime
        let staleness = age - lifetime  // ≥ 0: stale
        let stored = entry.facts.control
        // §4.2.4: never serve stale what the response forbids to.
        let mayServeStale =
            !stored.mustRevalidate && !stored.noCache
            && !(settings.shared && (stored.proxyRevalidate || stored.sMaxAge != nil))
        var usable = staleness < 0
        if let maxAge = control.maxAge, age > maxAge { usable = false }
        if let minFresh = control.minFresh, lifetime - age < minFresh { usable = false }
        var detail = entry.ttl != nil ? "; detail=ttl-override" : ""
        if !usable, staleness >= 0, mayServeStale, !noCache, control.maxAge.map({ age <= $0 }) ?? true {
            if control.maxStaleAny || control.maxStale.map({ staleness <= $0 }) == true {
                usable = true
                detail = "; detail=stale"
            } else if control.minFresh == nil, let window = stored.staleWhileRevalidate, staleness <= window {
                usable = true
                detail = "; detail=stale-while-revalidate"
                refreshInBackground(entry, url: url)
            }
        }
        if usable, !noCache {
            if let forward = collapsedForward, collapsed {
                cacheStatus = Exchange.cacheName + "; fwd=\(forward); collapsed"
            } else {
                cacheStatus = Exchange.cacheName + "; hit; ttl=" + String(lifetime - age) + detail
            }
            serveHit(entry, age: age)
            client.server.cache?.touch(entry.id, now: now)
            return true
        }
        prepareRevalidation(entry)
        // RFC 5861 §4: the response's or the request's `stale-if-error`, else `serve_stale_on_error`.
        let window =
            [stored.staleIfError, control.staleIfError].compactMap { $0 }.min()
            ?? (settings.serveStaleOnError > 0 ? Int64(settings.serveStaleOnError / 1000) : nil)
        if mayServeStale, let window, staleness <= window, !noCache || control.staleIfError != nil {
            staleFallback = entry
        }
        mustRevalidateStale =
            staleness >= 0 && (stored.mustRevalidate || (settings.shared && stored.proxyRevalidate))
        return false
    }

    /// Answers from a stored response: 304 when the client's own validators match (§4.3.2),
    /// otherwise the stored head with `Age` and the body from the file, with backpressure.
    func serveHit(_ entry: CacheStore.Entry, age: Int64, upstream: UpstreamRequest? = nil) {
        client.server.stats.cacheHits += 1
        if upstream == nil, let head = plainHitHead(entry, age: age) {
            // The common hit: the client head comes from memory, only Age and Cache-Status are new.
            headFromCache = true
            status = entry.head.status
            framing = .length
            pendingHead = head
            return startCachedBody(entry)
        }
        var head = entry.head
        head.headers.set("Age", String(max(0, age)))
        if let accept = rule.accept, accept.onReject == .enforce,
            let failure = ResponseValidator.validate(
                head, request: upstream ?? forwardRequest, acceptance: accept, rule: rule.name)
        {
            return fail(.validationFailed(failure))
        }
        if Exchange.clientValidatorsMatch(request.headers, stored: head.headers), head.status == 200 {
            var headers = HTTPFields()
            for field in head.headers
            where ["etag", "cache-control", "content-location", "date", "expires", "vary", "age", "last-modified"]
                .contains(where: field.hasName)
            {
                headers.append(name: field.name, value: field.value)
            }
            deliverHead(
                ResponseHead(status: 304, reason: "Not Modified", version: head.version, headers: headers),
                request: upstream, fromCache: true)
            return deliverEnd()
        }
        deliverHead(head, request: upstream, fromCache: true)
        if request.method == "HEAD" || framing == .none && stripping == nil {
            return deliverEnd()
        }
        startCachedBody(entry)
    }

    /// Sends the entry's body after the head: from memory when the hot set holds it, else by chunks.
    private func startCachedBody(_ entry: CacheStore.Entry) {
        cachedBody = (entry.id, entry.size, 0, 0)
        cachedBytes = client.server.cache?.wholeBody(entry)
        pumpCachedBody()
    }

    /// The client head of a hit that needs nothing but the stored head — a keep-alive HTTP/1.1
    /// GET, no validation, no stripping, no conditional match, a Content-Length body kept in
    /// memory with its Date — made by the general path (`Forwarding.clientResponse`) once per
    /// kept body, then completed here with Age and Cache-Status. `nil`: take the general path.
    private func plainHitHead(_ entry: CacheStore.Entry, age: Int64) -> [UInt8]? {
        guard rule.accept == nil, stripMode == nil, marks.isEmpty, request.method == "GET", request.minorVersion == 1,
            keepAlive, !client.server.isShuttingDown, let cacheStatus, let cache = client.server.cache,
            !Exchange.clientValidatorsMatch(request.headers, stored: entry.head.headers)
        else { return nil }
        var template = cache.hotHead(entry.id)
        if template == nil {
            let stored = entry.head.headers
            guard cache.bodyIsHot(entry.id), stored.contains("date"), stored.contains("content-length"),
                !stored.contains("transfer-encoding")
            else { return nil }
            var head = entry.head
            head.headers.remove("age")
            let (headers, framing) = Forwarding.clientResponse(
                head, request: request, date: "", keepAlive: true, stripped: true)
            guard framing == .length else { return nil }
            var bytes = ResponseWriter.head(status: head.status, reason: head.reason, headers: headers)
            bytes.removeLast(2)  // the empty line: Age and Cache-Status follow
            cache.keepHotHead(bytes, entry: entry.id)
            template = bytes
        }
        guard var bytes = template else { return nil }
        bytes.reserveCapacity(bytes.count + cacheStatus.utf8.count + 40)
        bytes.append(contentsOf: "Age: ".utf8)
        bytes.append(contentsOf: String(max(0, age)).utf8)
        bytes.append(contentsOf: "\r\nCache-Status: ".utf8)
        bytes.append(contentsOf: cacheStatus.utf8)
        bytes.append(contentsOf: "\r\n\r\n".utf8)
        return bytes
    }

    /// Sends stored body chunks until the client falls behind (resumed by `clientDrained`) or the end.
    func pumpCachedBody() {
        guard let cache = client.server.cache else { return }
        while var body = cachedBody {
            // Behind, or gone (its error event is on the way: nothing more is read for it).
            if client.connection.writeBroken
                || (stripping == nil && client.connection.outputCount >= ClientConnection.outputHighWater)
            {
                pausedForClient = true
                return
            }
            if let bytes = cachedBytes {
                // A small body held in memory (the hot set): slices of it, with the same backpressure.
                let start = Int(body.sent)
                guard start < bytes.count else {
                    cachedBody = nil
                    cachedBytes = nil
                    return deliverEnd()
                }
                let end = min(bytes.count, start + CacheWriter.chunkSize)
                guard bytes.withUnsafeBytes({ deliverBody(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }) else {
                    return
                }
                body.sent = Int64(end)
                cachedBody = body
                continue
            }
            guard let chunk = cache.chunk(entry: body.entry, seq: body.next) else {
                cachedBody = nil
                if body.sent != body.size {
                    // The file lost part of the body (purged meanwhile, or unreadable): never fake an end.
                    error = .upstreamFailed(reason: .badResponse(detail: "the stored body could not be read whole"))
                    aborted = true
                    return finish(closeConnection: true)
                }
                return deliverEnd()
            }
            body.next += 1
            body.sent += Int64(chunk.count)
            cachedBody = body
            let taken = chunk.withUnsafeBytes { deliverBody($0) }
            if !taken {
                // deliverBody refused only because the client is behind: rewind one chunk.
                body.next -= 1
                body.sent -= Int64(chunk.count)
                cachedBody = body
                return
            }
        }
    }

    // MARK: - RFC 5861

    /// `stale-while-revalidate`: the stale entry was served; one background request refreshes it.
    private func refreshInBackground(_ entry: CacheStore.Entry, url: TargetURL) {
        guard let cache = client.server.cache, let key = cacheKey, request.method == "GET" else { return }
        let server = client.server
        guard server.refreshes[key] == nil else { return }
        let admission = CacheAdmission(
            cache: cache, settings: cacheSettings, key: key, url: url, method: request.method,
            request: request.headers, requestTime: server.clock(), rule: rule, ruleName: ruleMatched ? rule.name : nil)
        let refresh = BackgroundRefresh(server: server, admission: admission, entry: entry)
        server.refreshes[key] = refresh
        refresh.start(forwardRequest, hooks: fetchHooks())
    }

    /// The origin failed: serve the stale entry kept for that, if any. `true` = served.
    func serveStaleAfterError(upstreamStatus: Int?) -> Bool {
        guard let entry = staleFallback, !headSent, pendingHead == nil else { return false }
        staleFallback = nil
        revalidation = nil
        revalidated = nil
        staleTrigger = nil
        stripping = nil
        abandonCacheWriter()
        releaseCollapsedWaiters()
        let now = client.server.clock()
        cacheStatus =
            Exchange.cacheName + "; fwd=stale" + (upstreamStatus.map { "; fwd-status=\($0)" } ?? "")
            + "; detail=stale-if-error"
        serveHit(entry, age: entry.age(at: now), upstream: upstreamRequest)
        client.server.cache?.touch(entry.id, now: now)
        return true
    }

    /// The origin status (or the status Sluice would answer) when a failure is one that
    /// `stale-if-error` covers: no connection, timeout, a bad response, or a 5xx the rule rejected.
    static func originFailureStatus(_ failure: SluiceError) -> (covered: Bool, originStatus: Int?) {
        switch failure {
        case .upstreamFailed(let reason):
            if case .cancelled = reason { return (false, nil) }
            return (true, nil)
        case .validationFailed(let validation) where errorStatuses.contains(validation.status):
            return (true, validation.status)
        default:
            return (false, nil)
        }
    }

    // MARK: - Collapsed forwarding

    /// A miss on a key known to be cacheable (it has a stored entry) waits while another exchange
    /// fetches it, or becomes that exchange. Other misses never wait, nor do requests that would
    /// not take a stored answer (`no-cache`). `true` = this exchange waits.
    func joinCollapsedFetch() -> Bool {
        guard let key = cacheKey, !collapsed, !requestNoCache, cacheSettings.collapseForwarding,
            let cache = client.server.cache, !request.headers.contains("range")
        else { return false }
        let collapser = client.server.collapser
        if collapser.join(key, self) {
            waitingForCollapse = true
            // Like nginx's proxy_cache_lock_timeout: a fetch held up by its own slow client does
            // not hold the waiters up for longer than this; they then fetch for themselves.
            let timer = Timer(loop: client.server.loop) { [weak self] in
                guard let self, self.waitingForCollapse else { return }
                self.client.server.collapser.leave(key, self)
                self.resumeAfterCollapse()
            }
            timer.schedule(milliseconds: max(1, cacheSettings.collapseTimeout))
            collapseTimer = timer
            return true
        }
        if request.method == "GET", cache.hasEntries(key) {
            collapser.lead(key)
            leadsCollapse = true
        }
        return false
    }

    /// This exchange's fetch is done with the cache (stored, refused, failed): the waiters look again.
    func releaseCollapsedWaiters() {
        guard leadsCollapse, let key = cacheKey else { return }
        leadsCollapse = false
        client.server.collapser.release(key, loop: client.server.loop)
    }

    /// The leader released this waiter: look again (a hit now, or a fetch of its own).
    func resumeAfterCollapse() {
        guard waitingForCollapse, let url = targetURL else { return }
        waitingForCollapse = false
        collapseTimer?.cancel()
        collapseTimer = nil
        collapsed = true
        proceed(url: url)
    }
}
