/// The machine's vocabulary: what it knows from the start, the events it is told, the actions it
/// returns.
extension ExchangeMachine {
    /// What `head`, the answer to this exchange's `fetch`, makes of the stored `entry` (§4.3.4),
    /// under `cache`'s rules and this request's `Authorization` (§3.5).
    func freshened(
        _ entry: CacheStore.Entry, by head: ResponseHead, _ fetch: ExchangePhase.Fetch, _ cache: CacheRules,
        now: Double
    ) -> (served: CacheStore.Entry, kept: CacheStore.Entry?) {
        cache.freshened(
            entry, by: head, requestTime: fetch.requestTime, now: now,
            authorized: context.request.headers.contains(.authorization))
    }

    /// The cache settings the machine decides with (plain values: copied with every exchange).
    struct CacheRules: Equatable {
        var freshness: Freshness.Settings
        var heuristic: CachePolicy.Heuristic
        var collapseForwarding: Bool
        /// `cache.store_set_cookie` (by default: only in a private cache).
        var storesSetCookie: Bool

        init(_ cache: Configuration.Cache) {
            freshness = Freshness.Settings(cache)
            heuristic = cache.heuristic
            collapseForwarding = cache.collapseForwarding
            storesSetCookie = cache.storesSetCookie
        }

        /// ``Revalidation/freshened(_:by:requestTime:now:shared:storesSetCookie:facts:)`` under these settings.
        func freshened(
            _ entry: CacheStore.Entry, by response: ResponseHead, requestTime: Double, now: Double, authorized: Bool
        ) -> (served: CacheStore.Entry, kept: CacheStore.Entry?) {
            Revalidation.freshened(
                entry, by: response, requestTime: requestTime, now: now, shared: freshness.shared,
                storesSetCookie: storesSetCookie, authorized: authorized, facts: facts)
        }

        /// What freshness needs from a stored head under these settings.
        func facts(_ headers: HTTPFields) -> CacheStore.Facts {
            CacheStore.Facts(headers, shared: freshness.shared, heuristic: heuristic)
        }
    }

    /// What the machine knows of its exchange from the start.
    struct Context {
        /// The client's request.
        var request: ProxyRequest
        /// The normalised target URL: the cache key.
        var url: String
        /// What delivery does to a JSON body (a rule's patch, the stripping asked for); `nil`: nothing.
        var transform: JSONTransform?
        /// `limits.max_transform_body`.
        var transformLimit: Int
        /// The cache settings; `nil` when there is no cache.
        var cache: CacheRules?
        /// The rule's acceptable statuses and types (`accept:`), and its name; `nil`: no rule
        /// validates this exchange. In `enforce` mode a stored response that fails is not served.
        var acceptance: Acceptance? = nil
        var ruleName = ""
        /// The rule checks responses against a contract: a stored one too, as it is served (never
        /// the memory tier's plain path, which skips the stages).
        var checksContract = false
    }

    /// What happened.
    enum Event {
        /// Route decided (``Route``), with the null stripping the rule or the client asked for.
        case routed(Route, transform: JSONTransform?, now: Double)
        /// The cache tiers answered a lookup; `pieces`: the stored `206`s of the key, for a `Range`
        /// request; `collapse` is what collapsed forwarding knows of the key.
        case lookedUp([CacheStore.Entry], pieces: [CacheStore.Entry] = [], collapse: CollapseView, now: Double)
        /// The fetch this exchange waited for is done with the cache (or the wait timed out).
        case collapseReleased
        /// The fetch this exchange waits for writes an entry chosen by `varyNames` (with this
        /// `variant`) that may be streamed while it is written.
        case collapseMayStream(CacheWriter)
        /// The final response head, after the session's hooks.
        case responseHead(ResponseHead, now: Double)
        /// The store step decided at the head.
        case storing(StoreStart)
        /// The entry being written was given up (too large, the database refused) or committed.
        case storeEnded
        /// The upstream task ended: `nil` = the response arrived whole. `ownError` is a failure of
        /// the client's side (its request body), which outranks what libcurl reports.
        case upstreamCompleted(SluiceError?, ownError: SluiceError?, now: Double)
        /// The client went away or stalled; `othersWait`: exchanges wait behind this one's fetch.
        case clientGone(SluiceError?, othersWait: Bool = true)
        /// The driver finished the exchange.
        case finished(ExchangePhase.Outcome)
    }

    /// Route's answer.
    enum Route {
        case refused(SluiceError)
        /// TRACE or OPTIONS with `Max-Forwards: 0`.
        case answerLocally
        case forward
        /// A recording answers (`replay:`): fetched from it, never stored.
        case replay
    }

    /// What the store step did with a response, as far as collapsed waiters are concerned.
    enum StoreStart: Equatable {
        /// An entry is being written that waiters may be given (and stream as it is written).
        case shared
        /// Refused, or personal (`private`, a cookie kept from others): waiters cannot be given
        /// it, and the key is remembered as uncacheable.
        case notShareable
        /// The database refused the row: says nothing of the key.
        case failed
    }

    /// What collapsed forwarding knows of a key at lookup.
    struct CollapseView: Equatable {
        /// Another exchange fetches the key now.
        let fetching: Bool
        /// The key's last response could not be stored or shared (within `cache.uncacheable_ttl`):
        /// its misses go upstream side by side.
        let uncacheable: Bool
    }

    /// What the driver does, in order.
    enum Action {
        /// Answer a problem (or cut the connection when the head was sent).
        case fail(SluiceError)
        case answerLocally
        /// `Cache-Status` for the response (RFC 9211).
        case setCacheStatus(CacheStatus)
        /// Ask the cache tiers for the key's entries (answered by ``Event/lookedUp(_:collapse:now:)``).
        case lookUp(key: String)
        /// Wait behind the fetch of `key` (with the collapse timeout).
        case wait(key: String)
        /// Stop waiting (the client went away).
        case leave(key: String)
        /// This exchange fetches `key` for waiters.
        case lead(key: String)
        /// The waiters on `key` look again.
        case release(key: String)
        /// The entry being written for `key` may be streamed by its waiters.
        case shareWhileWriting(key: String)
        /// Serve the entry the awaited fetch is writing, as it is written, in this form
        /// (``StoredAnswer/notModified`` or ``StoredAnswer/whole(_:)``).
        case serveWhileWritten(CacheWriter, StoredAnswer)
        /// `key`'s response cannot be stored or shared: its misses stop collapsing for a while.
        case rememberUncacheable(key: String)
        /// `key`'s response is stored for everyone: its misses collapse again.
        case forgetUncacheable(key: String)
        /// A lookup went upstream.
        case countMiss
        /// Start the upstream task with these conditional fields.
        case fetch(conditions: [HTTPFields.Field])
        /// Refresh `entry` with one background request (RFC 5861 `stale-while-revalidate`).
        case refreshInBackground(CacheStore.Entry, others: [CacheStore.Entry])
        /// Serve a stored response `age` seconds old, in this form.
        case serve(CacheStore.Entry, age: Int64, as: StoredAnswer)
        /// Store `entry`'s refreshed head (a 304, or a 200 to HEAD that agrees).
        case refreshStored(CacheStore.Entry)
        /// Drop every stored response for a key (§4.3.5: a HEAD showed the entry is out of date).
        case invalidate(key: String)
        /// Validate, store, transform and write the head (``JSONBodyDelivery/Plan``).
        case deliverHead(ResponseHead, JSONBodyDelivery.Plan)
        /// The body is whole: commit what is being stored.
        case commitStore
        /// Nothing being stored may stay; nothing held goes out.
        case abandonStore
        /// Close the response's framing (held bodies are stripped and sent first).
        case endResponse
        case cancelUpstream(SluiceError)
        /// Stop sending a stored body.
        case stopStoredBody
        /// Finish now and close the connection.
        case finishClosing
        /// The client side is over (recorded, connection closed) while the fetch goes on for the
        /// waiters; the driver keeps itself alive until ``endOrphan``.
        case detachClient
        /// Store step for a response whose client left: admission and writer, nothing for a client.
        case storeOnly(ResponseHead)
        /// The orphaned fetch is over.
        case endOrphan
    }
}
