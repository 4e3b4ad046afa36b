/// The reuse decision for a request with stored responses (RFC 9111 §4, §4.2.4, §5.2.1; RFC 5861):
/// which candidate fits (Vary, §4.1), and whether it is served, served stale, revalidated or
/// passed over. A pure function of the candidates, the request, the settings and `now`; the
/// lookup step carries out what it says.
enum Freshness {
    /// What the request asks of the cache (§5.2.1), read once per exchange.
    struct Request {
        /// The request's `Cache-Control`.
        var control: CacheControl
        /// `no-cache` (or `Pragma: no-cache` without `Cache-Control`): nothing is served unvalidated.
        var noCache: Bool
        /// The request's header fields (Vary selection, the client's own validators).
        var headers: HTTPFields

        init(_ headers: HTTPFields) {
            self.headers = headers
            control = CacheControl(headers)
            noCache =
                control.noCache
                || (!headers.contains(.cacheControl) && headers.tokens(.pragma).contains("no-cache"))
        }

        /// Whether the client sent validators of its own (then Sluice adds none, §4.3.1).
        var hasOwnValidators: Bool {
            ResponseValidator.conditionalFields.contains { headers.contains($0) }
        }
    }

    /// The settings the decision depends on.
    struct Settings: Equatable {
        /// A shared cache (§5.2.2.8 `proxy-revalidate` and `s-maxage` forbid stale reuse).
        var shared = true
        /// `cache.serve_stale_on_error` in seconds; `nil` = off.
        var staleOnError: Int64?

        init(shared: Bool = true, staleOnError: Int64? = nil) {
            self.shared = shared
            self.staleOnError = staleOnError
        }

        init(_ cache: Configuration.Cache) {
            shared = cache.shared
            staleOnError = cache.serveStaleOnError > 0 ? Int64(cache.serveStaleOnError / 1000) : nil
        }
    }

    /// What the origin's failure leads to while a stored response is being revalidated.
    enum OriginFailure {
        /// The failure goes to the client.
        case fail
        /// The stale entry answers instead (RFC 5861 §4 `stale-if-error`, `serve_stale_on_error`).
        case serveStale(CacheStore.Entry)
        /// §5.2.2.2: a stale `must-revalidate` response is never served without the origin: 504.
        case gatewayTimeout
    }

    /// Why nothing stored could answer.
    enum Miss: String, Equatable {
        /// Nothing stored under the URL.
        case uri = "uri-miss"
        /// Stored responses, none for this request's Vary'd fields.
        case vary = "vary-miss"

        /// The `fwd=` reason it gives.
        var forward: CacheStatus.Forward { self == .uri ? .uriMiss : .varyMiss }
    }

    /// The decision.
    enum Decision {
        /// Serve the entry; `detail` goes into `Cache-Status` (`stale` when the client's
        /// `max-stale` allowed it, `ttl-override` for a rule's lifetime).
        case fresh(CacheStore.Entry, age: Int64, ttl: Int64, detail: String?)
        /// Serve the stale entry now and refresh it behind the client's back (RFC 5861 §3).
        case staleWhileRevalidate(CacheStore.Entry, age: Int64, ttl: Int64)
        /// Ask the origin. `conditions` are the validators to send (empty: the entry has none, or
        /// the client brought its own); `forward` is `request` (the client's directives passed
        /// over a fresh response, or it said `no-cache`) or `stale`.
        case revalidate(
            CacheStore.Entry, conditions: [HTTPFields.Field], onOriginFailure: OriginFailure,
            forward: CacheStatus.Forward)
        /// Nothing stored fits.
        case miss(Miss)

        /// Whether the stored entry answers the client now (fresh, or stale while revalidated).
        var servesStored: Bool {
            switch self {
            case .fresh, .staleWhileRevalidate: true
            case .revalidate, .miss: false
            }
        }
    }

    /// The decision for `request` among a key's complete entries (newest first).
    static func decide(
        _ candidates: [CacheStore.Entry], request: Request, settings: Settings, now: Double
    ) -> Decision {
        guard !candidates.isEmpty else { return .miss(.uri) }
        guard
            let entry = candidates.first(where: {
                HTTPFields.Field.sameBytes(
                    $0.variant, CachePolicy.variant(names: $0.varyNames, request: request.headers))
            })
        else { return .miss(.vary) }
        return decide(entry, request: request, settings: settings, now: now)
    }

    /// The decision for one entry that fits the request's Vary'd fields.
    static func decide(_ entry: CacheStore.Entry, request: Request, settings: Settings, now: Double) -> Decision {
        let control = request.control
        let age = entry.age(at: now)
        let lifetime = entry.ttl ?? entry.facts.lifetime
        let staleness = age - lifetime  // ≥ 0: stale
        let stored = entry.facts.control
        // §4.2.4: never serve stale what the response forbids to.
        let mayServeStale =
            !stored.mustRevalidate && !stored.noCache
            && !(settings.shared && (stored.proxyRevalidate || stored.sMaxAge != nil))
        // §5.2.2.4: a stored `no-cache` (qualified or not: both are treated alike) is never reused
        // without a successful validation.
        var usable = staleness < 0 && !stored.noCache
        if let maxAge = control.maxAge, age > maxAge { usable = false }
        if let minFresh = control.minFresh, lifetime - age < minFresh { usable = false }
        if !request.noCache {
            if usable {
                return .fresh(
                    entry, age: age, ttl: lifetime - age, detail: entry.ttl != nil ? "ttl-override" : nil)
            }
            if staleness >= 0, mayServeStale, control.maxAge.map({ age <= $0 }) ?? true {
                if control.maxStaleAny || control.maxStale.map({ staleness <= $0 }) == true {
                    return .fresh(entry, age: age, ttl: lifetime - age, detail: "stale")
                }
                if control.minFresh == nil, let window = stored.staleWhileRevalidate, staleness <= window {
                    return .staleWhileRevalidate(entry, age: age, ttl: lifetime - age)
                }
            }
        }
        // RFC 5861 §4: the response's or the request's `stale-if-error`, else `serve_stale_on_error`.
        let window = [stored.staleIfError, control.staleIfError].compactMap { $0 }.min() ?? settings.staleOnError
        var onFailure = OriginFailure.fail
        if mayServeStale, let window, staleness <= window, !request.noCache || control.staleIfError != nil {
            onFailure = .serveStale(entry)
        } else if staleness >= 0, stored.mustRevalidate || (settings.shared && stored.proxyRevalidate) {
            onFailure = .gatewayTimeout
        }
        let conditions = request.hasOwnValidators ? [] : Revalidation.conditions(for: entry)
        // `fwd=request` when the request's own directives passed over a response still fresh
        // (`no-cache`, `max-age`, `min-fresh`: RFC 9211 §2.2), `stale` when it was not.
        let forward: CacheStatus.Forward = request.noCache || (staleness < 0 && !stored.noCache) ? .request : .stale
        return .revalidate(entry, conditions: conditions, onOriginFailure: onFailure, forward: forward)
    }
}
