/// Store, as the response streams: admission at the head, the origin's bytes into the file, the
/// entry made visible at the end when the will-cache hook agrees; unsafe methods invalidate.
extension Exchange {
    /// Methods whose success invalidates stored responses (RFC 9111 §4.4).
    static func isUnsafe(_ method: String) -> Bool {
        switch method {
        case "POST", "PUT", "PATCH", "DELETE": return true
        default: return false
        }
    }

    /// At the origin's response head: start storing it, or say why not; unsafe methods invalidate.
    func cacheResponseHead(_ response: ResponseHead, validationFailed: Bool) {
        guard let cache = client.server.cache, let url = targetURL else { return }
        if Exchange.isUnsafe(request.method), (200..<400).contains(response.status) {
            invalidate(url: url, response: response, cache: cache)
            return
        }
        guard let key = cacheKey, request.method == "GET" else { return }
        let admission = CacheAdmission(
            cache: cache, settings: cacheSettings, key: key, url: url, method: request.method,
            request: request.headers, requestTime: cacheRequestTime, rule: rule,
            ruleName: ruleMatched ? rule.name : nil)
        let status = cacheStatus ?? Exchange.cacheName + "; fwd=miss"
        switch admission.begin(response, validationFailed: validationFailed, now: client.server.clock()) {
        case .refused(let refusal):
            cacheStatus = status + "; detail=" + refusal.rawValue
            releaseCollapsedWaiters()
        case .skipped:
            releaseCollapsedWaiters()
        case .writing(let writer, let personal):
            cacheWriter = writer
            cacheStatus = status + "; stored"
            // Collapsed waiters are never handed a personal response (a private cache stores those).
            if personal { releaseCollapsedWaiters() }
        }
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
        releaseCollapsedWaiters()
    }

    /// The body is whole: commit it as the will-cache hook decided.
    func finishCacheWriter(_ task: UpstreamTask) {
        guard let writer = cacheWriter else { return }
        cacheWriter = nil
        let refusal = writer.finish(decision: task.cachingDecision)
        if refusal == nil { client.server.stats.cacheStores += 1 }
        client.server.cache?.recordDecision(
            url: writer.key, now: client.server.clock(), stored: refusal == nil, reason: refusal?.rawValue)
        releaseCollapsedWaiters()
    }

    func abandonCacheWriter() {
        guard let writer = cacheWriter else { return }
        cacheWriter = nil
        writer.abort()
        client.server.cache?.recordDecision(
            url: writer.key, now: client.server.clock(), stored: false, reason: "incomplete")
    }
}
