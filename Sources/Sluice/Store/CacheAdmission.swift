#if canImport(Glibc)
    import Glibc
#endif

/// Admission at a response head, for exchanges and background refreshes alike: RFC 9111 §3, then
/// the rule (`cache.store: false` refuses, `cache.ttl` admits responses without freshness), then
/// validation and the size limit. Either a ``CacheWriter`` for the body or the reason, recorded.
struct CacheAdmission {
    let cache: any CacheTier
    let settings: Configuration.Cache
    /// The cache key (the normalised URL) and the URL itself.
    let key: String
    let url: TargetURL
    /// The client's request method and header fields (Vary, Authorization, request directives).
    /// `GET`, also for a POST response stored as the answer to later GETs (``ResponseStoring``).
    var method: String
    var request: HTTPFields
    /// When the request went upstream (RFC 9111 §4.2.3 `request_time`).
    let requestTime: Double
    /// The rule in force (shared with the rule book, not copied); its `cache:` block: `store:
    /// false` refuses, `ttl` admits responses without freshness.
    let entry: RuleBook.Entry
    /// The rule's name when a rule (not the defaults) matched.
    var ruleName: String? { entry.matched ? entry.rule.name : nil }
    /// The request carries content however it is framed (an HTTP/2 GET's DATA has no length
    /// field): a GET's answer then is never stored (``CachePolicy/Refusal/requestContent``).
    var carriesContent = false

    enum Outcome {
        /// Storing; `personal`: `private`, or setting a cookie that the settings do not store for
        /// everyone (stored only by a private cache, never handed to collapsed waiters).
        case writing(CacheWriter, personal: Bool)
        case refused(CachePolicy.Refusal)
        /// The database refused the row; the response is delivered anyway.
        case skipped
    }

    func begin(_ response: ResponseHead, validationFailed: Bool, now: Double) -> Outcome {
        guard response.headers.contains(.date) else {
            // A response without Date is dated when it arrived (RFC 9110 §6.6.1): its heuristic
            // freshness and `Expires` count from then, as the client's copy says.
            var dated = response
            dated.headers.append(name: "Date", value: HTTPDate.format(time_t(now)), code: .date)
            return admit(dated, validationFailed: validationFailed, now: now)
        }
        return admit(response, validationFailed: validationFailed, now: now)
    }

    /// Whether a shared cache would store `response` too (RFC 9111 §3, §3.5 and Sluice's
    /// sharing rules): what a private cache keeps for its user goes to the shared tier only then.
    private func sharable(_ response: ResponseHead, control: CacheControl) -> Bool {
        var refusal = CachePolicy.refusal(
            method: method, request: request, response: response, control: control, shared: true,
            heuristic: settings.heuristic, storeSetCookie: false)
        if refusal == .noFreshness, entry.rule.cache?.ttl != nil { refusal = nil }
        return refusal == nil
    }

    private func admit(_ response: ResponseHead, validationFailed: Bool, now: Double) -> Outcome {
        let control = CacheControl(response.headers)  // parsed once for every check below
        var refusal = CachePolicy.refusal(
            method: method, request: request, response: response, control: control, shared: settings.shared,
            heuristic: settings.heuristic, storeSetCookie: settings.storesSetCookie)
        if refusal == nil, carriesContent, method == "GET" { refusal = .requestContent }
        if refusal == .noFreshness, entry.rule.cache?.ttl != nil { refusal = nil }
        if refusal == nil, entry.rule.cache?.store == false { refusal = .rule }
        if refusal == nil, validationFailed { refusal = .validation }
        // A 204's Content-Length frames no body (RFC 9112 §6.3): the entry is complete with none.
        let expected =
            response.status == 204
            ? 0
            : response.headers.contains(.transferEncoding)
                ? nil : response.headers[.contentLength].flatMap { Int64($0) }
        let limit = settings.entryLimit
        if refusal == nil, let expected, expected > limit { refusal = .tooLarge }
        if let refusal {
            cache.recordDecision(url: key, now: now, stored: false, reason: refusal.rawValue)
            return .refused(refusal)
        }
        let names = CachePolicy.varyNames(response.headers)
        let variant = CachePolicy.variant(names: names, request: request)
        var stored = response
        CachePolicy.stripUnstorable(&stored.headers)
        // A Date that is not one may be replaced by the time the response arrived (RFC 9110
        // §6.6.1): read only for what is stored, its freshness counts from then.
        if stored.headers[.date].flatMap(HTTPDate.parse) == nil {
            stored.headers.set("Date", HTTPDate.format(time_t(now)))
        }
        // A 206 is a piece of the representation, kept apart from the URL's complete responses.
        let new = CacheStore.NewEntry(
            stored: StoredHead(
                key: response.status == 206 ? CacheStore.piecesKey(key) : key, variant: variant, varyNames: names,
                status: stored.status, reason: stored.reason, headers: stored.headers, requestTime: requestTime,
                responseTime: now),
            method: method, url: url, rule: ruleName, limit: limit, expectedLength: expected,
            proposedHeaders: response.headers)
        guard let writer = cache.beginWrite(new) else { return .skipped }
        let setsCookie = CachePolicy.setsCookie(response.headers)
        writer.personal = control.isPrivate || setsCookie && !settings.storesSetCookie
        writer.keptFromTier = writer.personal || setsCookie || !settings.shared && !sharable(response, control: control)
        return .writing(writer, personal: writer.personal)
    }
}

extension Configuration.Cache {
    var heuristic: CachePolicy.Heuristic {
        CachePolicy.Heuristic(percent: Int64(heuristicPercent), maxSeconds: Int64(heuristicMax / 1000))
    }

    var shared: Bool { mode == .shared }

    /// What freshness needs from a stored head under these settings.
    func facts(_ headers: HTTPFields) -> CacheStore.Facts {
        CacheStore.Facts(headers, shared: shared, heuristic: heuristic)
    }
}
