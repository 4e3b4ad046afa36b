import EventIO

/// Lookup (before the fetch) and Store (as the response streams): RFC 9111 with a shared cache by
/// default. `Cache-Status` (RFC 9211) names what happened.
extension Exchange {
    static let cacheName = "Sluice"
    static let unsafeMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    private var sharedCache: Bool { client.server.configuration.cache.mode == .shared }

    private var heuristic: CachePolicy.Heuristic {
        let settings = client.server.configuration.cache
        return CachePolicy.Heuristic(
            percent: Int64(settings.heuristicPercent), maxSeconds: Int64(settings.heuristicMax / 1000))
    }

    // MARK: - Lookup

    /// Looks for a stored response; `true` when the exchange was answered (a hit or a 504).
    func lookup(url: TargetURL, upstream: UpstreamRequest) -> Bool {
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
        let candidates = request.headers.contains("range") ? [] : cache.candidates(key: key)
        var forward = "uri-miss"
        var served = false
        if !candidates.isEmpty {
            forward = "vary-miss"
            if let entry = candidates.first(where: {
                $0.variant == CachePolicy.variant(names: $0.varyNames, request: request.headers)
            }) {
                forward = "stale"
                let now = client.server.clock()
                let head = ResponseHead(status: entry.status, reason: entry.reason, headers: entry.headers)
                let age = CachePolicy.currentAge(
                    headers: entry.headers, requestTime: entry.requestTime, responseTime: entry.responseTime, now: now)
                let lifetime = CachePolicy.freshnessLifetime(head, shared: sharedCache, heuristic: heuristic)
                let stored = CacheControl(entry.headers)
                var usable = age < lifetime
                if let maxAge = control.maxAge, age > maxAge { usable = false }
                if let minFresh = control.minFresh, lifetime - age < minFresh { usable = false }
                var detail = ""
                if !usable, age >= lifetime, control.maxAge.map({ age <= $0 }) ?? true {
                    // Stale: only when the client allows it and the response does not forbid it (§4.2.4).
                    let mayServeStale =
                        !stored.mustRevalidate && !stored.noCache
                        && !(sharedCache && (stored.proxyRevalidate || stored.sMaxAge != nil))
                    let within = control.maxStaleAny || (control.maxStale.map { age - lifetime <= $0 } ?? false)
                    if mayServeStale, within {
                        usable = true
                        detail = "; detail=stale"
                    }
                }
                if noCache || !usable {
                    forward = noCache ? "request" : "stale"
                    prepareRevalidation(entry)
                } else if usable {
                    cacheStatus = Exchange.cacheName + "; hit; ttl=\(lifetime - age)" + detail
                    serveHit(entry, head: head, age: age, upstream: upstream)
                    cache.touch(entry.id, now: now)
                    served = true
                }
            }
        }
        if served { return true }
        if control.onlyIfCached {
            cacheStatus = Exchange.cacheName + "; fwd=\(forward); detail=only-if-cached"
            fail(.upstreamFailed(reason: .timedOut(detail: "only-if-cached: no stored response fits the request.")))
            return true
        }
        cacheStatus = Exchange.cacheName + "; fwd=\(forward)"
        return false
    }

    /// Answers from a stored response: 304 when the client's own validators match (§4.3.2),
    /// otherwise the stored head with `Age` and the body from the file, with backpressure.
    func serveHit(_ entry: CacheStore.Entry, head stored: ResponseHead, age: Int64, upstream: UpstreamRequest) {
        client.server.stats.cacheHits += 1
        var head = stored
        head.headers.set("Age", String(max(0, age)))
        if let accept = rule.accept, accept.onReject == .enforce,
            let failure = ResponseValidator.validate(head, request: upstream, acceptance: accept, rule: rule.name)
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
        cachedBody = (entry, 0, 0)
        pumpCachedBody()
    }

    /// Sends stored body chunks until the client falls behind (resumed by `clientDrained`) or the end.
    func pumpCachedBody() {
        guard let cache = client.server.cache else { return }
        while var body = cachedBody {
            if stripping == nil, client.connection.outputCount >= ClientConnection.outputHighWater {
                pausedForClient = true
                return
            }
            guard let chunk = cache.chunk(entry: body.entry.id, seq: body.next) else {
                cachedBody = nil
                if body.sent != body.entry.size {
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

    /// A stale (or `no-cache`) entry with validators: ask the origin whether it still holds (§4.3.1),
    /// unless the client brought its own validators.
    private func prepareRevalidation(_ entry: CacheStore.Entry) {
        let own = ResponseValidator.conditionalFields.contains { request.headers.contains($0) }
        guard !own, request.method == "GET" || request.method == "HEAD" else { return }
        var conditions: [(String, String)] = []
        if let etag = entry.headers["etag"] { conditions.append(("If-None-Match", etag)) }
        if let modified = entry.headers["last-modified"] { conditions.append(("If-Modified-Since", modified)) }
        guard !conditions.isEmpty else { return }
        revalidation = (entry, conditions)
    }

    /// The origin answered a revalidation: a 304 refreshes the stored entry and serves it (§4.3.4).
    /// Returns `true` when the head was taken for that (nothing goes to the client yet).
    func takeRevalidationHead(_ response: ResponseHead) -> Bool {
        guard let (entry, _) = revalidation else { return false }
        revalidation = nil
        guard response.status == 304 else { return false }
        var merged = entry.headers
        var update = response.headers
        HopByHop.strip(&update)
        for field in update
        where !["content-length", "content-encoding", "transfer-encoding", "content-range"].contains(
            where: field.hasName)
        {
            merged.set(field.name, field.value)
        }
        // Header lines that the 304 repeated several times keep all of their values.
        for name in Set(update.map { $0.name.lowercased() }) where update.values(name).count > 1 {
            merged.remove(name)
            for value in update.values(name) { merged.append(name: name, value: value) }
        }
        revalidated = CacheStore.Entry(
            id: entry.id, variant: entry.variant, varyNames: entry.varyNames, status: entry.status,
            reason: entry.reason,
            headers: merged, requestTime: cacheRequestTime, responseTime: client.server.clock(), size: entry.size)
        return true
    }

    /// The 304 completed: store the refreshed head and serve the body from the file.
    func serveRevalidated(_ entry: CacheStore.Entry, upstream: UpstreamRequest) {
        guard let cache = client.server.cache else { return }
        cache.refresh(entry)
        let head = ResponseHead(status: entry.status, reason: entry.reason, headers: entry.headers)
        let now = client.server.clock()
        let age = CachePolicy.currentAge(
            headers: entry.headers, requestTime: entry.requestTime, responseTime: entry.responseTime, now: now)
        cacheStatus = Exchange.cacheName + "; fwd=stale; fwd-status=304"
        serveHit(entry, head: head, age: age, upstream: upstream)
    }

    /// Whether the client's `If-None-Match` (weak comparison) or `If-Modified-Since` fits the stored response.
    static func clientValidatorsMatch(_ request: HTTPFields, stored: HTTPFields) -> Bool {
        if let inm = request["if-none-match"] {
            guard let etag = stored["etag"] else { return false }
            let tag = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
            return inm.split(separator: ",").contains { candidate in
                let text = candidate.trimmingOWS()
                return text == "*" || (text.hasPrefix("W/") ? String(text.dropFirst(2)) : text) == tag
            }
        }
        if let ims = request["if-modified-since"].flatMap(HTTPDate.parse) {
            guard let modified = (stored["last-modified"] ?? stored["date"]).flatMap(HTTPDate.parse) else {
                return false
            }
            return modified <= ims
        }
        return false
    }

    // MARK: - Store

    /// At the origin's response head: start storing it, or say why not; unsafe methods invalidate.
    func cacheResponseHead(_ response: ResponseHead, request upstream: UpstreamRequest, validationFailed: Bool) {
        guard let cache = client.server.cache, let url = targetURL else { return }
        if Exchange.unsafeMethods.contains(request.method), (200..<400).contains(response.status) {
            invalidate(url: url, response: response, cache: cache)
            return
        }
        guard let key = cacheKey, request.method == "GET" else { return }
        let now = client.server.clock()
        var refusal = CachePolicy.refusal(
            method: request.method, request: request.headers, response: response, shared: sharedCache,
            heuristic: heuristic)
        if refusal == nil, validationFailed { refusal = .validation }
        let expected =
            response.headers.contains("transfer-encoding")
            ? nil : response.headers["content-length"].flatMap { Int64($0) }
        let limit = client.server.configuration.cache.entryLimit
        if refusal == nil, let expected, expected > limit { refusal = .tooLarge }
        if let refusal {
            cacheStatus = (cacheStatus ?? Exchange.cacheName + "; fwd=miss") + "; detail=\(refusal.rawValue)"
            cache.recordDecision(url: key, now: now, stored: false, reason: refusal.rawValue)
            return
        }
        let names = CachePolicy.varyNames(response.headers)
        let variant = CachePolicy.variant(names: names, request: request.headers)
        var stored = response
        HopByHop.strip(&stored.headers)
        guard
            let entry = cache.begin(
                key: key, variant: variant, varyNames: names, method: request.method, url: url, head: stored,
                requestTime: cacheRequestTime, responseTime: now, rule: ruleMatched ? rule.name : nil)
        else { return }
        cacheWriter = CacheWriter(
            store: cache, entry: entry, key: key, variant: variant, limit: limit, expectedLength: expected)
        cacheStatus = (cacheStatus ?? Exchange.cacheName + "; fwd=miss") + "; stored"
    }

    /// §4.4: the target URI and same-origin `Location` / `Content-Location` lose every stored variant.
    private func invalidate(url: TargetURL, response: ResponseHead, cache: CacheStore) {
        cache.invalidate(key: url.description)
        for name in ["location", "content-location"] {
            guard let value = response.headers[name] else { continue }
            let target: TargetURL?
            if value.hasPrefix("/") {
                target = TargetURL(scheme: url.scheme, host: url.host, port: url.port, pathAndQuery: value)
            } else {
                target = TargetURL(value)
            }
            if let target, target.origin == url.origin { cache.invalidate(key: target.description) }
        }
    }

    func cacheBody(_ bytes: UnsafeRawBufferPointer) {
        guard let writer = cacheWriter, let refusal = writer.append(bytes) else { return }
        cacheWriter = nil
        client.server.cache?.recordDecision(
            url: writer.key, now: client.server.clock(), stored: false, reason: refusal.rawValue)
    }

    func finishCacheWriter() {
        guard let writer = cacheWriter else { return }
        cacheWriter = nil
        let refusal = writer.finish()
        if refusal == nil { client.server.stats.cacheStores += 1 }
        client.server.cache?.recordDecision(
            url: writer.key, now: client.server.clock(), stored: refusal == nil, reason: refusal?.rawValue)
    }

    func abandonCacheWriter() {
        guard let writer = cacheWriter else { return }
        cacheWriter = nil
        writer.abort()
        client.server.cache?.recordDecision(
            url: writer.key, now: client.server.clock(), stored: false, reason: "incomplete")
    }
}
