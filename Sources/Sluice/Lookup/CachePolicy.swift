/// RFC 9111 decisions as pure functions of messages and times (seconds since the epoch).
enum CachePolicy {
    /// Whether a response sets a cookie: `Set-Cookie`, or the obsolete `Set-Cookie2` (RFC 2965),
    /// which is one client's state all the same.
    static func setsCookie(_ headers: HTTPFields) -> Bool {
        headers.contains(.setCookie) || headers.contains("Set-Cookie2")
    }

    /// Removes what sets a cookie (``setsCookie(_:)``).
    static func removeCookies(_ headers: inout HTTPFields) {
        headers.remove(.setCookie)
        headers.remove("Set-Cookie2")
    }

    /// Removes what a cache never stores (RFC 9111 §3.1): the connection's own fields, and those
    /// about authenticating to a proxy (Proxy-Authenticate, Proxy-Authorization and
    /// Proxy-Authentication-Info, which is for the client that chose the proxy).
    static func stripUnstorable(_ headers: inout HTTPFields) {
        HopByHop.strip(&headers)
        headers.remove("Proxy-Authentication-Info")
    }

    /// Why a response was not stored (`Cache-Status: …; detail=…`).
    enum Refusal: String, Equatable {
        case method, status, noStore = "no-store", isPrivate = "private", authorization
        case varyStar = "vary-star", noFreshness = "no-freshness", partial, validation, rule
        case tooLarge = "too-large", incomplete
        /// The response sets a cookie and `cache.store_set_cookie` is off.
        case setCookie = "set-cookie"
        /// Shared mode: the request carried a header that changes responses but is not in the key.
        case unkeyedHeader = "unkeyed-request-header"
        /// Shared mode: a response to a request with cookies states no freshness of its own.
        case cookieRequest = "cookie-without-explicit-freshness"
        /// Shared mode: the response varies on credentials the request carried.
        case credentialVariant = "varies-on-credentials"
        /// The GET carried content, which the key does not hold ("fat GET").
        case requestContent = "request-content"
    }

    /// Request fields that origins and frameworks act on but caches do not key on (the usual web
    /// cache poisoning vectors). A shared cache stores no response to a request carrying one,
    /// unless the response's `Vary` names it.
    static let unkeyedRequestFields = [
        "x-forwarded-host", "x-forwarded-server", "x-forwarded-scheme", "x-forwarded-proto", "x-forwarded-port",
        "x-forwarded-prefix", "x-host", "x-original-url", "x-rewrite-url", "x-original-host", "x-http-method-override",
        "x-http-method", "x-method-override", "forwarded",
        // What auth and routing front ends hand origins (nginx auth_request's X-Original-URI and
        // -Method, Traefik forwardAuth's X-Forwarded-Uri and -Method, Envoy's original path).
        "x-original-uri", "x-original-method", "x-forwarded-uri", "x-forwarded-path", "x-forwarded-method",
        "x-envoy-original-path",
    ]

    /// Request fields that carry a user's credentials.
    static let credentialFields = ["authorization", "cookie", "proxy-authorization"]

    /// Status codes cacheable by heuristic (RFC 9110 §15.1).
    static let heuristicStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Statuses whose caching rules Sluice implements, what `must-understand` asks about (§5.2.2.3).
    /// Any other final status is stored only when it states its freshness and says nothing of
    /// `must-understand`.
    static let understoodStatuses: Set<Int> = [
        200, 203, 204, 206, 300, 301, 302, 303, 307, 308, 400, 403, 404, 405, 410, 414, 500, 501, 502, 503, 504,
    ]

    /// §3: may this response be stored? `nil` = yes.
    /// `control` is the response's `Cache-Control` when the caller parsed it already.
    /// - Parameter storeSetCookie: whether responses with `Set-Cookie` may be stored (``Configuration/Cache/storesSetCookie``).
    static func refusal(
        method: String, request: HTTPFields, response: ResponseHead, control parsed: CacheControl? = nil, shared: Bool,
        heuristic: Heuristic, storeSetCookie: Bool = false
    ) -> Refusal? {
        guard method == "GET" else { return .method }
        // RFC 9110 §9.3.1: content in a GET has no defined meaning, yet some origins act on it;
        // the key does not hold it, so an answer to it is never stored (fat-GET poisoning).
        if request.contains(.transferEncoding) || request[.contentLength].map({ $0.trimmingOWS() != "0" }) == true {
            return .requestContent
        }
        // §3.3: a 206 is stored as a piece when it says which bytes of what length it holds (a
        // 200 to a `Range` is the whole representation, stored like any other).
        if response.status == 206, !request.contains(.range) || ByteRange.Piece(response.headers) == nil {
            return .partial
        }
        // 1xx are interim, 304 only updates what is stored (§4.3.4); every other final status may be stored.
        guard (200...599).contains(response.status), response.status != 304 else { return .status }
        let control = parsed ?? CacheControl(response.headers)
        // §5.2.2.3: must-understand stores only the statuses whose rules are implemented, and then overrides no-store.
        if control.mustUnderstand, !understoodStatuses.contains(response.status) { return .status }
        if control.noStore, !control.mustUnderstand { return .noStore }
        if request.contains(.cacheControl), CacheControl(request).noStore { return .noStore }
        if shared, control.isPrivate { return .isPrivate }
        if shared, request.contains(.authorization), !control.mustRevalidate, !control.isPublic, control.sMaxAge == nil
        {
            return .authorization
        }
        if response.headers.tokens(.vary).contains("*") { return .varyStar }
        if !storeSetCookie, setsCookie(response.headers) { return .setCookie }
        if shared, let refusal = sharingRefusal(request: request, response: response) { return refusal }
        // §3: a status that is not heuristically cacheable needs explicit freshness (or `public`,
        // or `private` in a private cache) to be stored at all.
        let explicit =
            control.maxAge != nil || (shared && control.sMaxAge != nil) || response.headers.contains(.expires)
        let marked = control.isPublic || (!shared && control.isPrivate)
        // (Refused as `status`, so that a rule's `ttl` does not keep a passing error.)
        guard explicit || marked || heuristicStatuses.contains(response.status) else { return .status }
        let lifetime = freshnessLifetime(response, control: control, shared: shared, heuristic: heuristic)
        // Without freshness a response is still worth keeping when it can be revalidated (§4.3).
        let validators = response.headers.contains(.etag) || response.headers.contains(.lastModified)
        guard lifetime > 0 || validators || explicit else { return .noFreshness }
        return nil
    }

    /// An unkeyed field spelt with underscores (`X_Forwarded_Host`): CGI, WSGI and PHP-FPM origins
    /// read it as the dashed one (both become `HTTP_X_FORWARDED_HOST`).
    static func hasUnderscoredUnkeyedField(_ request: HTTPFields, varied: [String]) -> Bool {
        for field in request where field.code == .other && field.name.utf8.contains(UInt8(ascii: "_")) {
            let lowered = field.name.lowercasedASCII()
            let dashed = String(
                decoding: lowered.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
            if unkeyedRequestFields.contains(dashed), !varied.contains(lowered) { return true }
        }
        return false
    }

    /// What a shared cache refuses beyond RFC 9111 so that one user's request cannot decide what
    /// another receives: unkeyed headers (poisoning), cookie-bearing requests whose response states
    /// no freshness (cache deception: `/account/x.css` must not be kept on a heuristic or a rule's
    /// TTL), and variants keyed on credentials (the secret would be stored in the variant).
    private static func sharingRefusal(request: HTTPFields, response: ResponseHead) -> Refusal? {
        let varied = varyNames(response.headers)
        if unkeyedRequestFields.contains(where: { request.contains($0) && !varied.contains($0) })
            || hasUnderscoredUnkeyedField(request, varied: varied)
        {
            return .unkeyedHeader
        }
        if credentialFields.contains(where: { request.contains($0) && varied.contains($0) }) {
            return .credentialVariant
        }
        if request.contains(.cookie), !hasExplicitFreshness(response.headers) { return .cookieRequest }
        return nil
    }

    /// The heuristic (RFC 9111 §4.2.2): a fraction of `Date − Last-Modified`, capped.
    struct Heuristic: Equatable {
        var percent: Int64 = 10
        var maxSeconds: Int64 = 86_400
    }

    /// §4.2.1: `s-maxage` (shared) > `max-age` > `Expires − Date` > heuristic.
    static func freshnessLifetime(
        _ response: ResponseHead, control parsed: CacheControl? = nil, shared: Bool, heuristic: Heuristic
    ) -> Int64 {
        let control = parsed ?? CacheControl(response.headers)
        if shared, let sMaxAge = control.sMaxAge { return sMaxAge }
        if let maxAge = control.maxAge { return maxAge }
        let expiresLines = response.headers.values(.expires)
        if !expiresLines.isEmpty {
            // §5.3: an Expires that is not one valid HTTP-date (e.g. "0", another zone, several
            // lines) means already expired.
            guard let expires = HTTPDate.parseStrict(single: expiresLines) else { return 0 }
            let date = response.headers[.date].flatMap(HTTPDate.parse) ?? expires
            return max(0, expires - date)
        }
        guard !control.noCache, heuristicStatuses.contains(response.status) || control.isPublic,
            let modified = response.headers[.lastModified].flatMap(HTTPDate.parse),
            let date = response.headers[.date].flatMap(HTTPDate.parse), date > modified
        else { return 0 }
        return min((date - modified) * heuristic.percent / 100, heuristic.maxSeconds)
    }

    /// Where ``freshnessLifetime(_:shared:heuristic:)`` takes the lifetime from, in words.
    static func lifetimeSource(_ headers: HTTPFields, shared: Bool) -> String {
        let control = CacheControl(headers)
        if shared, control.sMaxAge != nil { return "s-maxage" }
        if control.maxAge != nil { return "max-age" }
        if headers.contains(.expires) { return "Expires - Date" }
        if headers.contains(.lastModified) { return "heuristic (a share of Date - Last-Modified)" }
        return "none stated (stored to be revalidated)"
    }

    /// Whether the response states its own freshness (`s-maxage`, `max-age` or `Expires`), as opposed to a heuristic.
    static func hasExplicitFreshness(_ headers: HTTPFields) -> Bool {
        if headers.contains(.expires) { return true }
        guard headers.contains(.cacheControl) else { return false }
        let control = CacheControl(headers)
        return control.maxAge != nil || control.sMaxAge != nil
    }

    /// §4.3.4: the stored header fields updated with a 304's (framing fields excepted); a field the
    /// 304 repeated keeps all of its lines. The stored `Age` goes when the update has none: the
    /// entry's response time becomes the update's, and §4.2.3 takes age_value from the same
    /// response (the old Age, counted again from the new time, aged the entry twice: one older
    /// than its lifetime came back stale from every revalidation).
    static func merge(_ stored: HTTPFields, with update: HTTPFields) -> HTTPFields {
        var merged = stored
        if !update.contains(.age) { merged.remove(.age) }
        var update = update
        stripUnstorable(&update)
        for field in update
        where !["content-length", "content-encoding", "transfer-encoding", "content-range"].contains(
            where: field.hasName)
        {
            merged.set(line: field)
        }
        for name in Set(update.map { $0.name.lowercased() }) where update.values(name).count > 1 {
            merged.remove(name)
            for field in update where field.hasName(name) { merged.append(line: field) }
        }
        return merged
    }

    /// §4.2.3: the current age of a stored response.
    static func currentAge(headers: HTTPFields, requestTime: Double, responseTime: Double, now: Double) -> Int64 {
        currentAge(
            date: headers[.date].flatMap(HTTPDate.parse).map(Double.init),
            ageValue: ageValue(headers),
            requestTime: requestTime, responseTime: responseTime, now: now)
    }

    /// §5.1: the `Age` value in seconds: the first member of the first line (a list or several
    /// lines count by their first), digits only (parameters after `;` ignored), saturating at
    /// 2^31; an invalid value (negative, fractional, not a number) is ignored (0).
    static func ageValue(_ headers: HTTPFields) -> Double {
        guard let line = headers[.age] else { return 0 }
        var value: Int64 = 0
        var digits = 0
        var rest = Substring(line).drop { $0 == " " || $0 == "\t" }
        while let c = rest.utf8.first, c >= 0x30, c <= 0x39 {
            value = min(value * 10 + Int64(c - 0x30), 2_147_483_648)
            digits += 1
            rest = rest.dropFirst()
        }
        rest = rest.drop { $0 == " " || $0 == "\t" }
        guard digits > 0, rest.isEmpty || rest.first == "," || rest.first == ";" else { return 0 }
        return Double(value)
    }

    /// §4.2.3 from the `Date` and `Age` values already parsed.
    static func currentAge(
        date dateValue: Double?, ageValue: Double, requestTime: Double, responseTime: Double, now: Double
    )
        -> Int64
    {
        let date = dateValue ?? responseTime
        let apparentAge = max(0, responseTime - date)
        let responseDelay = responseTime - requestTime
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = now - responseTime
        return Int64((correctedInitialAge + residentTime).rounded(.down))
    }
}
