/// Revalidation (RFC 9111 §4.3): stale entries are checked with their validators, a 304 (or a
/// matching 200 to HEAD, §4.3.5) refreshes them, and clients' own conditionals are answered.
extension Exchange {
    /// A stale (or `no-cache`) entry with validators: ask the origin whether it still holds (§4.3.1),
    /// unless the client brought its own validators.
    func prepareRevalidation(_ entry: CacheStore.Entry) {
        let own = ResponseValidator.conditionalFields.contains { request.headers.contains($0) }
        guard !own else { return }
        let conditions = Exchange.conditions(for: entry)
        guard !conditions.isEmpty else { return }
        revalidation = (entry, conditions)
    }

    /// `If-None-Match` / `If-Modified-Since` for a stored response's validators.
    static func conditions(for entry: CacheStore.Entry) -> [(String, String)] {
        var conditions: [(String, String)] = []
        if let etag = entry.headers["etag"] { conditions.append(("If-None-Match", etag)) }
        if let modified = entry.headers["last-modified"] { conditions.append(("If-Modified-Since", modified)) }
        return conditions
    }

    /// The origin answered a revalidation: a 304 refreshes the stored entry and serves it (§4.3.4).
    /// Returns `true` when the head was taken for that (nothing goes to the client yet).
    func takeRevalidationHead(_ response: ResponseHead) -> Bool {
        guard let (entry, _) = revalidation else { return false }
        revalidation = nil
        guard let cache = client.server.cache else { return false }
        guard response.status == 304 else {
            if request.method == "HEAD", response.status == 200 {
                freshenStoredGet(entry, from: response, store: cache)
            }
            return false
        }
        revalidated = Exchange.refreshed(
            entry, by: response, requestTime: cacheRequestTime, now: client.server.clock(), store: cache)
        return true
    }

    /// A stored entry as a 304 updates it: merged header fields, new times; a `ttl` override
    /// stays only while the response still states no freshness of its own.
    static func refreshed(
        _ entry: CacheStore.Entry, by response: ResponseHead, requestTime: Double, now: Double, store: CacheStore
    ) -> CacheStore.Entry {
        var updated = entry
        updated.headers = CachePolicy.merge(entry.headers, with: response.headers)
        updated.facts = store.facts(updated.headers)
        updated.requestTime = requestTime
        updated.responseTime = now
        if CachePolicy.hasExplicitFreshness(updated.headers) { updated.ttl = nil }
        return updated
    }

    /// §4.3.5: a 200 to HEAD updates the stored GET response it was checked against, as a 304 would,
    /// when their validators (and any `Content-Length`) agree; otherwise the stored response is out
    /// of date and the URI's stored responses go.
    private func freshenStoredGet(_ entry: CacheStore.Entry, from response: ResponseHead, store: CacheStore) {
        let received = ["etag", "last-modified"].filter { response.headers.contains($0) }
        let agree =
            !received.isEmpty
            && (received + ["content-length"]).allSatisfy { name in
                response.headers[name].map { $0.trimmingOWS() == entry.headers[name]?.trimmingOWS() } ?? true
            }
        if agree {
            store.refresh(
                Exchange.refreshed(
                    entry, by: response, requestTime: cacheRequestTime, now: client.server.clock(), store: store))
        } else {
            store.invalidate(key: entry.key)
        }
    }

    /// The 304 completed: store the refreshed head and serve the body from the file.
    func serveRevalidated(_ entry: CacheStore.Entry, upstream: UpstreamRequest) {
        guard let cache = client.server.cache else { return }
        cache.refresh(entry)
        releaseCollapsedWaiters()
        cacheStatus = Exchange.cacheName + "; fwd=stale; fwd-status=304"
        serveHit(entry, age: entry.age(at: client.server.clock()), upstream: upstream)
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
}
