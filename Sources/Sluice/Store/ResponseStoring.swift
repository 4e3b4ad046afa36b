/// Store, as one exchange's response streams: admission at the head (``CacheAdmission``), the
/// origin's bytes into the entry, the entry made visible at the end when the will-cache hook
/// agrees; responses to unsafe methods invalidate instead (RFC 9111 §4.4), and a POST response
/// that names itself the target's representation is stored for GETs (RFC 9110 §9.3.3).
enum ResponseStoring {
    /// What the store step did at a response head.
    enum Start {
        /// Nothing to do (not a GET, or no cache key).
        case none
        /// An unsafe method succeeded: stored responses were dropped.
        case invalidated
        /// An entry is being written; `shareable`: collapsed waiters may be given it.
        case writing(CacheWriter, shareable: Bool)
        /// Not stored, for this reason.
        case refused(CachePolicy.Refusal)
        /// The database refused the row; the response is delivered anyway.
        case skipped
    }

    /// §4.4: any method not known to be safe (RFC 9110 §9.2.1: GET, HEAD, OPTIONS, TRACE) may
    /// change the resource, methods Sluice has never heard of (`M-SEARCH`, `FOO`) included.
    /// (`CONNECT` never gets here: it opens a tunnel.)
    static func isUnsafe(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE": return false
        default: return true
        }
    }

    /// At the origin's response head: invalidate (unsafe methods), or begin an entry.
    static func start(
        _ response: ResponseHead, method: String, url: TargetURL, key: String?, cache: any CacheTier,
        admission: () -> CacheAdmission, validationFailed: Bool, now: Double
    ) -> Start {
        if isUnsafe(method), (200..<400).contains(response.status) {
            for key in invalidatedKeys(url: url, response: response) { cache.invalidate(key: key) }
            guard method == "POST", answersLaterGets(response, url: url) else { return .invalidated }
            var asGet = admission()
            asGet.method = "GET"
            // The POST's content is what made the response, not part of a GET's request.
            asGet.request.remove(codes: FieldCode.contentLength.bit | FieldCode.transferEncoding.bit)
            asGet.carriesContent = false
            return begin(asGet, response, validationFailed: validationFailed, now: now)
        }
        guard key != nil, method == "GET" else { return .none }
        return begin(admission(), response, validationFailed: validationFailed, now: now)
    }

    /// RFC 9110 §9.3.3, RFC 9111 §4: a POST response with explicit freshness whose
    /// `Content-Location` is the target URI is the current representation of that URI, and may
    /// answer later GETs.
    static func answersLaterGets(_ response: ResponseHead, url: TargetURL) -> Bool {
        guard let location = response.headers[.contentLocation],
            CachePolicy.hasExplicitFreshness(response.headers)
        else { return false }
        return resolve(location, against: url)?.description == url.description
    }

    /// A `Location` or `Content-Location` value (a URI reference, RFC 9110 §10.2.2, §8.7) as the
    /// URL it names, resolved against `url` (RFC 3986 §5.2): absolute, a path on `url`'s origin,
    /// or relative to `url`'s path (`b`, `./b`, `../b`, `?q`).
    static func resolve(_ value: String, against url: TargetURL) -> TargetURL? {
        RedirectState.resolve(value, against: url)
    }

    private static func begin(
        _ admission: CacheAdmission, _ response: ResponseHead, validationFailed: Bool, now: Double
    ) -> Start {
        switch admission.begin(response, validationFailed: validationFailed, now: now) {
        case .refused(let refusal): return .refused(refusal)
        case .skipped: return .skipped
        case .writing(let writer, let personal): return .writing(writer, shareable: !personal)
        }
    }

    /// §4.4: the target URI and the same-origin `Location` / `Content-Location` URIs.
    static func invalidatedKeys(url: TargetURL, response: ResponseHead) -> [String] {
        var keys = [url.description]
        for name in ["location", "content-location"] {
            guard let value = response.headers[name], let target = resolve(value, against: url) else { continue }
            if target.origin == url.origin { keys.append(target.description) }
        }
        return keys
    }
}

extension CacheWriter {
    /// Adds body bytes; `false` when the entry was given up (the decision is recorded).
    func append(_ bytes: UnsafeRawBufferPointer, now: Double) -> Bool {
        guard let refusal = append(bytes) else { return true }
        store.recordDecision(url: key, now: now, stored: false, reason: refusal.rawValue)
        return false
    }

    /// The body is whole: commit it as the will-cache hook decided; `true` = stored.
    func commit(decision: CachingDecision, now: Double) -> Bool {
        let refusal = finish(decision: decision)
        store.recordDecision(url: key, now: now, stored: refusal == nil, reason: refusal?.rawValue)
        return refusal == nil
    }

    /// The transfer failed or the client left: nothing of it stays.
    func abandon(now: Double) {
        abort()
        store.recordDecision(url: key, now: now, stored: false, reason: "incomplete")
    }
}
