/// The path of one client request, as the phases it passes through (Varnish's `cache_req_fsm.c`,
/// for a forward proxy). ``ExchangeMachine`` moves between them; ``Exchange`` carries out what it
/// decides; each step's detail lives in its own folder.
///
/// ```
/// routing ──▶ lookingUp ──┬─ fresh / stale allowed ────────────────▶ servingStored ──┐
///    │            ▲       ├─ another exchange fetches the key ─▶ awaitingCollapse ─┤ (looks again)
///    │            └───────┼──────────────────────────────────────────────────────┘
///    │                    └─ miss / stale / no-cache ─┐
///    └─ not cacheable ────────────────────────────────┴─▶ fetching ─┬─ 304 or 5xx answered by
///                                                                    │  the stale entry ─▶ servingStored
///                                                                    └─ response ─▶ done
/// ```
/// 1. **routing** (`Route/`): policy allows the target, the first matching rule applies; TRACE and
///    OPTIONS with `Max-Forwards: 0` are answered here; refusals are problems.
/// 2. **lookingUp** (`Lookup/`): the cache tiers are asked for the key's stored responses (an
///    asynchronous tier answers later: the exchange waits in this phase); ``Freshness`` decides.
/// 3. **awaitingCollapse** (`Lookup/Collapser`): a miss on a key that another exchange is fetching
///    waits for it, then looks again (RFC 9211 `collapsed`) — or, once that fetch is storing a
///    shareable response, serves it as it is written (read-while-write, `servingStored`).
/// 4. **fetching** (`Fetch/`): an upstream task; its ``Fetch`` says what is revalidated, what an
///    origin failure leads to, whether waiters depend on it, and where the body goes (``Delivery``).
///    At the head: validate (`Validate/`), store or invalidate (`Store/`), transform (`Transform/`).
///    A leader whose client leaves goes on, orphaned, for its waiters: into the cache only.
/// 5. **servingStored** (`Respond/`): a stored response is written from the cache tiers (a
///    `Range` of it as a 206 or 416, or a range cut from a stored 206 piece).
/// 6. **done**: one record for the monitors; the connection decides keep-alive.
enum ExchangePhase {
    /// Route: nothing decided yet.
    case routing
    /// Lookup: waiting for the cache tiers' candidates. `afterCollapse` is the first lookup's
    /// forward reason when this is the look after a collapsed wait.
    case lookingUp(key: String, afterCollapse: CacheStatus.Forward?)
    /// Waiting for the exchange that fetches `key`; `forward` is why the first lookup missed.
    case awaitingCollapse(key: String, forward: CacheStatus.Forward)
    /// The upstream task runs.
    case fetching(Fetch)
    /// A stored response goes to the client.
    case servingStored(Serving)
    /// The exchange ended.
    case done(Outcome)

    /// When the running fetch's request went upstream, if one runs.
    var fetchRequestTime: Double? {
        if case .fetching(let fetch) = self { return fetch.requestTime }
        return nil
    }

    /// What one upstream fetch is for and where its response goes.
    struct Fetch {
        /// When the request went upstream (RFC 9111 §4.2.3 `request_time`).
        var requestTime: Double
        /// The stored entry whose validators were sent (§4.3.1), until the response head arrives.
        var revalidating: Revalidating?
        /// What an origin failure leads to (stale-if-error, must-revalidate).
        var onOriginFailure: Freshness.OriginFailure
        /// Whether collapsed waiters depend on this fetch.
        var collapse: CollapseRole
        /// Where the response goes.
        var delivery: Delivery
    }

    /// The stored entry a 304 may update (§4.3.4), until the response head arrives.
    enum Revalidating {
        /// Sluice sent its validators (§4.3.1): the entry was stale, or the request's own
        /// `no-cache` asked (`forward`, for `Cache-Status` when the origin confirms it).
        case sluice(CacheStore.Entry, forward: CacheStatus.Forward)
        /// The client's own conditional request went past this stale entry: a 304 whose
        /// validator selects it updates it too.
        case client(CacheStore.Entry)
    }

    /// This fetch's part in collapsed forwarding.
    enum CollapseRole {
        case none
        /// Waiters on `key` look again when this fetch is done with the cache.
        case leading(key: String)
    }

    /// Where an upstream response goes.
    enum Delivery {
        /// No final response head yet.
        case awaitingHead
        /// The body goes to the client (and into the cache when stored). A contract check or a
        /// JSON transform may hold it whole until the end (the exchange's delivery stages, the
        /// one place that knows, with the bytes): nothing here depends on it.
        case streaming
        /// The body goes nowhere: a stored response answers at completion.
        case discarding(Discard)
        /// The client left while waiters depend on this fetch: the response goes on into the cache
        /// only, for them (a leader's client that goes away does not cancel their fetch).
        case orphaned

        var isOrphaned: Bool {
            if case .orphaned = self { return true }
            return false
        }
    }

    /// Why an upstream body is discarded.
    enum Discard {
        /// The origin said 304: the refreshed entry is served (§4.3.4), and `kept` stored
        /// (``Revalidation/freshened(_:by:requestTime:now:shared:storesSetCookie:facts:)``).
        case notModified(CacheStore.Entry, kept: CacheStore.Entry?, forward: CacheStatus.Forward)
        /// The origin answered this 5xx, and the stale entry answers instead (RFC 5861 §4).
        case originError(status: Int)
        /// A 304 about another representation than the stored one (§4.3.4: it updates nothing):
        /// the request goes again, without conditions, once this one is done.
        case otherRepresentation
    }

    /// Which stored answer is being served.
    enum Serving: Equatable {
        /// Fresh, or stale where allowed.
        case hit
        /// Refreshed by a 304.
        case revalidated
        /// Being written by the fetch this exchange waited for (read-while-write).
        case whileWritten
        /// Stale, because the origin failed.
        case staleIfError
    }

    /// How the exchange ended.
    enum Outcome: Equatable {
        /// The whole response reached the client (or its socket buffer).
        case completed
        /// A problem was answered, or the connection was cut after the head.
        case failed
    }
}
