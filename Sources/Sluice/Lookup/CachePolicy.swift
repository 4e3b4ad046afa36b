/// `Cache-Control` directives (RFC 9111 §5.2), parsed once per message; unknown ones are ignored.
struct CacheControl: Equatable {
    var noStore = false
    var noCache = false
    var noTransform = false
    var isPrivate = false
    var isPublic = false
    var mustRevalidate = false
    var proxyRevalidate = false
    var onlyIfCached = false
    var maxAge: Int64?
    var sMaxAge: Int64?
    var maxStale: Int64?
    /// `max-stale` without a value: any staleness.
    var maxStaleAny = false
    var minFresh: Int64?
    var staleWhileRevalidate: Int64?
    var staleIfError: Int64?

    init(_ fields: HTTPFields) {
        for value in fields.values("cache-control") {
            for item in value.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1)
                guard let first = parts.first else { continue }
                let name = first.trimmingOWS().lowercased()
                var argument: Int64?
                if parts.count == 2 {
                    var text = parts[1].trimmingOWS()
                    if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 {
                        text = String(text.dropFirst().dropLast())
                    }
                    // Delta-seconds (§1.2.2): digits only; overflow saturates at 2^31.
                    if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                        argument = text.count > 10 ? 2_147_483_648 : min(Int64(text) ?? 0, 2_147_483_648)
                    }
                }
                switch name {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "no-transform": noTransform = true
                case "private": isPrivate = true
                case "public": isPublic = true
                case "must-revalidate": mustRevalidate = true
                case "proxy-revalidate": proxyRevalidate = true
                case "only-if-cached": onlyIfCached = true
                case "max-age": maxAge = argument ?? (parts.count == 2 ? 0 : nil)
                case "s-maxage": sMaxAge = argument ?? (parts.count == 2 ? 0 : nil)
                case "max-stale":
                    if parts.count == 2 { maxStale = argument } else { maxStaleAny = true }
                case "min-fresh": minFresh = argument
                case "stale-while-revalidate": staleWhileRevalidate = argument
                case "stale-if-error": staleIfError = argument
                default: break
                }
            }
        }
    }
}

/// RFC 9111 decisions as pure functions of messages and times (seconds since the epoch).
enum CachePolicy {
    /// Why a response was not stored (`Cache-Status: …; detail=…`).
    enum Refusal: String, Equatable {
        case method, status, noStore = "no-store", isPrivate = "private", authorization
        case varyStar = "vary-star", noFreshness = "no-freshness", partial, validation, rule
        case tooLarge = "too-large", incomplete
    }

    /// Status codes cacheable by heuristic (RFC 9110 §15.1).
    static let heuristicStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Statuses Sluice stores at all (final, understood).
    static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501]

    /// §3: may this response be stored? `nil` = yes.
    static func refusal(
        method: String, request: HTTPFields, response: ResponseHead, shared: Bool, heuristic: Heuristic
    ) -> Refusal? {
        guard method == "GET" else { return .method }
        if response.status == 206 || request.contains("range") { return .partial }
        guard storableStatuses.contains(response.status) else { return .status }
        let requestControl = CacheControl(request)
        let control = CacheControl(response.headers)
        if requestControl.noStore || control.noStore { return .noStore }
        if shared, control.isPrivate { return .isPrivate }
        if shared, request.contains("authorization"), !control.mustRevalidate, !control.isPublic, control.sMaxAge == nil
        {
            return .authorization
        }
        if response.headers.tokens("vary").contains("*") { return .varyStar }
        if shared, response.headers.contains("set-cookie") { return .isPrivate }
        let lifetime = freshnessLifetime(response, shared: shared, heuristic: heuristic)
        // Without freshness a response is still worth keeping when it can be revalidated (§4.3).
        let validators = response.headers.contains("etag") || response.headers.contains("last-modified")
        guard lifetime > 0 || validators else { return .noFreshness }
        return nil
    }

    /// The heuristic (RFC 9111 §4.2.2): a fraction of `Date − Last-Modified`, capped.
    struct Heuristic: Equatable {
        var percent: Int64 = 10
        var maxSeconds: Int64 = 86_400
    }

    /// §4.2.1: `s-maxage` (shared) > `max-age` > `Expires − Date` > heuristic.
    static func freshnessLifetime(_ response: ResponseHead, shared: Bool, heuristic: Heuristic) -> Int64 {
        let control = CacheControl(response.headers)
        if shared, let sMaxAge = control.sMaxAge { return sMaxAge }
        if let maxAge = control.maxAge { return maxAge }
        if let expiresText = response.headers["expires"] {
            // An invalid Expires (e.g. "0") means already expired (§5.3).
            guard let expires = HTTPDate.parse(expiresText) else { return 0 }
            let date = response.headers["date"].flatMap(HTTPDate.parse) ?? expires
            return max(0, expires - date)
        }
        guard !control.noCache, heuristicStatuses.contains(response.status) || control.isPublic,
            let modified = response.headers["last-modified"].flatMap(HTTPDate.parse),
            let date = response.headers["date"].flatMap(HTTPDate.parse), date > modified
        else { return 0 }
        return min((date - modified) * heuristic.percent / 100, heuristic.maxSeconds)
    }

    /// §4.2.3: the current age of a stored response.
    static func currentAge(headers: HTTPFields, requestTime: Double, responseTime: Double, now: Double) -> Int64 {
        let date = headers["date"].flatMap(HTTPDate.parse).map(Double.init) ?? responseTime
        let ageValue = headers["age"].flatMap { Int64($0.trimmingOWS()) }.map(Double.init) ?? 0
        let apparentAge = max(0, responseTime - date)
        let responseDelay = responseTime - requestTime
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = now - responseTime
        return Int64((correctedInitialAge + residentTime).rounded(.down))
    }

    /// The Vary'd request header values, normalised (lower-case names, values with runs of
    /// whitespace collapsed), in the order of the `Vary` field names.
    static func variant(names: [String], request: HTTPFields) -> String {
        names.map { name in
            let values = request.values(name).map {
                $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            }
            return name + ":" + values.joined(separator: ",")
        }.joined(separator: "\n")
    }

    /// Every `Vary` line's field names combined, lower-cased, without duplicates.
    static func varyNames(_ headers: HTTPFields) -> [String] {
        var names: [String] = []
        for name in headers.tokens("vary") where !names.contains(name) { names.append(name) }
        return names
    }
}
