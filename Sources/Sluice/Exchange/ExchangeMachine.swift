/// The decisions of one exchange as a pure state machine: an ``Event`` in, the ``ExchangePhase``
/// moved on and the ``Action``s for the driver out. No I/O, no clock (times arrive with events),
/// no references to sockets or libcurl: tested alone, a table of cases (`ExchangeMachineTests`).
struct ExchangeMachine {
    /// The origin answers that count as an error for `stale-if-error` (RFC 5861 §4).
    static let errorStatuses: Set<Int> = [500, 502, 503, 504]

    private(set) var context: Context
    /// Set only by the machine's own transitions (this file and its `+` extensions).
    var phase = ExchangePhase.routing
    /// The cache key, once the cache takes part in the exchange (a GET or HEAD it may answer).
    private(set) var cacheKey: String?
    /// The key's other stored responses (other variants) while a fetch may get a 304: one with a
    /// strong validator updates each that has it (§4.3.4). Kept beside the phase, not in it (the
    /// phase is copied at every step; this is rarely anything but empty).
    var otherVariants: [CacheStore.Entry] = []

    init(_ context: Context) { self.context = context }

    /// Where upstream body bytes go now.
    enum BodyRoute {
        /// To the client (and into the cache when stored).
        case client
        /// Into the cache only: the client left and collapsed waiters depend on the fetch.
        case cacheOnly
        /// Nowhere: a stored response answers instead.
        case nowhere
    }

    var bodyRoute: BodyRoute {
        guard case .fetching(let fetch) = phase else { return .client }
        switch fetch.delivery {
        case .discarding: return .nowhere
        case .orphaned: return .cacheOnly
        case .awaitingHead, .streaming: return .client
        }
    }

    /// Whether upstream body bytes are thrown away (a stored response answers instead).
    var discardsBody: Bool { bodyRoute == .nowhere }

    /// Whether the client left and the fetch goes on for collapsed waiters (bytes go only into the cache).
    var isOrphaned: Bool { bodyRoute == .cacheOnly }

    /// Whether the fetch would go on without its client were the client to leave (a collapse
    /// leader: see ``mayOrphan(_:)``).
    var mayBeOrphaned: Bool {
        guard case .fetching(let fetch) = phase else { return false }
        return Self.mayOrphan(fetch)
    }

    /// Whether a stored response is being served.
    var servesStored: Bool { if case .servingStored = phase { true } else { false } }

    /// Whether the exchange ended.
    var isDone: Bool { if case .done = phase { true } else { false } }

    // MARK: - Transitions

    /// The actions for `event`, in a new array (tests; the driver passes its own).
    mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        handle(event, into: &actions)
        return actions
    }

    /// Appends the actions for `event` to `actions`: the driver hands in one array for every
    /// event, emptied with its room kept, so an event's decisions allocate nothing (five arrays
    /// a request, were each transition to return its own).
    mutating func handle(_ event: Event, into actions: inout [Action]) {
        // The event first, then the phase it applies in: a `switch (phase, event)` would copy
        // both into a tuple (every payload retained) on each event. Events that no longer matter
        // in the phase (a late completion after the client left) do nothing. An orphaned fetch
        // (its client left; it fetches for waiters) takes its events in `orphaned`, checked
        // where a case binds the fetch anyway (binding copies it: once per event, not twice).
        switch event {
        case .routed(let route, let transform, let now):
            guard case .routing = phase else { return }
            context.transform = transform
            routed(route, now: now, into: &actions)
        case .lookedUp(let candidates, let pieces, let collapse, let now):
            guard case .lookingUp(let key, let after) = phase else { return }
            lookedUp(
                key: key, candidates, pieces: pieces, collapse: collapse, afterCollapse: after,
                mayCollapse: after == nil && !context.request.headers.contains(.range)
                    && !Self.cameThroughSluices(context),
                now: now, into: &actions)
        case .collapseReleased:
            guard case .awaitingCollapse(let key, let forward) = phase else { return }
            phase = .lookingUp(key: key, afterCollapse: forward)
            actions.append(.lookUp(key: key))
        case .collapseMayStream(let writer):
            guard case .awaitingCollapse(let key, let forward) = phase else { return }
            // A GET whose nominated fields select the same variant takes the response as it is
            // written; any other waiter waits for the release and looks again.
            let request = context.request
            guard request.method == "GET", !request.headers.contains(.range),
                HTTPFields.Field.sameBytes(
                    CachePolicy.variant(names: writer.varyNames, request: request.headers), writer.variant)
            else { return }
            phase = .servingStored(.whileWritten)
            actions.append(.leave(key: key))
            actions.append(.setCacheStatus(CacheStatus(.forward(forward), collapsed: true)))
            switch answer(writer.head, size: 0, fromUpstream: true) {
            case .success(let answer): actions.append(.serveWhileWritten(writer, answer))
            case .failure(let error): actions.append(.fail(error))
            }
        case .responseHead(let head, let now):
            guard case .fetching(let fetch) = phase else { return }
            if fetch.delivery.isOrphaned { return actions += orphaned(fetch, event) }
            responseHead(head, fetch, now: now, into: &actions)
        case .storing(let start):
            guard case .fetching(let fetch) = phase else { return }
            if fetch.delivery.isOrphaned { return actions += orphaned(fetch, event) }
            storing(fetch, start, into: &actions)
        case .storeEnded:
            guard case .fetching(let fetch) = phase else { return }
            if fetch.delivery.isOrphaned { return actions += orphaned(fetch, event) }
            if let release = releasing(fetch) { actions.append(release) }
        case .upstreamCompleted(let failure, let ownError, let now):
            guard case .fetching(let fetch) = phase else { return }
            if fetch.delivery.isOrphaned { return actions += orphaned(fetch, event) }
            guard let failure else { return completed(fetch, now: now, into: &actions) }
            actions += failed(fetch, failure, ownError: ownError, now: now)
        case .clientGone(let reason, let othersWait):
            switch phase {
            case .fetching(let fetch) where fetch.delivery.isOrphaned:
                return  // the client side is gone already
            case .fetching(var fetch) where Self.mayOrphan(fetch, othersWait: othersWait):
                fetch.delivery = .orphaned
                phase = .fetching(fetch)
                actions.append(.detachClient)
            case .fetching:
                actions.append(.abandonStore)
                actions.append(
                    .cancelUpstream(reason ?? .badRequest(reason: .malformed("client closed the connection"))))
                actions.append(Self.ending(reason))
            case .servingStored:
                actions.append(.stopStoredBody)
                actions.append(.finishClosing)
            case .done: return
            default: actions.append(Self.ending(reason))
            }
        case .finished(let outcome):
            finished(outcome, into: &actions)
        }
    }

    /// How an exchange whose client failed ends: a client too slow with its request body
    /// (`timeouts.client_body`) is told so (408; the driver closes instead when the head went
    /// out already), one that left is not.
    static func ending(_ reason: SluiceError?) -> Action {
        if case .badRequest(reason: .timedOut)? = reason { return .fail(.badRequest(reason: .timedOut)) }
        return .finishClosing
    }

    private mutating func routed(_ route: Route, now: Double, into actions: inout [Action]) {
        switch route {
        case .refused(let error):
            actions.append(.fail(error))
        case .answerLocally:
            actions.append(.answerLocally)
        case .replay:
            actions.append(.setCacheStatus(CacheStatus(.replay)))
            actions.append(fetchUncached(now: now))
        case .forward:
            guard context.cache != nil else { return actions.append(fetchUncached(now: now)) }
            let request = context.request
            guard request.method == "GET" || request.method == "HEAD" else {
                actions.append(.setCacheStatus(.forward(.method)))
                return actions.append(fetchUncached(now: now))
            }
            if request.headers.contains(.cacheControl), CacheControl(request.headers).noStore {
                actions.append(.setCacheStatus(.forward(.request, detail: "no-store")))
                return actions.append(fetchUncached(now: now))
            }
            let key = context.url
            cacheKey = key
            // A range is answered from a complete stored response (the driver cuts it out); a miss
            // goes upstream with the Range, never collapsed.
            phase = .lookingUp(key: key, afterCollapse: nil)
            actions.append(.lookUp(key: key))
        }
    }

    /// A fetch the cache takes no part in.
    mutating func fetchUncached(now: Double) -> Action {
        phase = .fetching(
            .init(
                requestTime: now, revalidating: nil, onOriginFailure: .fail, collapse: .none,
                delivery: .awaitingHead))
        return .fetch(conditions: [])
    }

    // MARK: - Fetch

    private mutating func responseHead(
        _ head: ResponseHead, _ current: ExchangePhase.Fetch, now: Double, into actions: inout [Action]
    ) {
        guard case .awaitingHead = current.delivery else { return }
        var fetch = current
        if case .serveStale = fetch.onOriginFailure, Self.errorStatuses.contains(head.status) {
            fetch.delivery = .discarding(.originError(status: head.status))  // answered at completion
            phase = .fetching(fetch)
            return
        }
        if !otherVariants.isEmpty {
            // §4.3.4: every other stored response with the 304's strong validator is updated too.
            if head.status == 304, let cache = context.cache {
                for other in Revalidation.alsoSelected(by: head, among: otherVariants) {
                    if let kept = freshened(other, by: head, fetch, cache, now: now).kept {
                        actions.append(.refreshStored(kept))
                    }
                }
            }
            otherVariants = []
        }
        if case .client(let entry) = fetch.revalidating, let cache = context.cache {
            fetch.revalidating = nil
            // A 304 to the client's own conditions: passed on, and it freshens the stored response
            // its validator names (§4.3.4). Without one it says nothing about that response.
            let validated = head.headers.contains(.etag) || head.headers.contains(.lastModified)
            if head.status == 304, validated, Revalidation.selects(head, entry),
                let kept = freshened(entry, by: head, fetch, cache, now: now).kept
            {
                actions.append(.refreshStored(kept))
            }
        }
        if case .sluice(let entry, let forward) = fetch.revalidating, let cache = context.cache {
            fetch.revalidating = nil
            if head.status == 304, !Revalidation.selects(head, entry) || Revalidation.changesVary(head, entry) {
                fetch.delivery = .discarding(.otherRepresentation)
                phase = .fetching(fetch)
                return
            }
            let updated = freshened(entry, by: head, fetch, cache, now: now)
            if head.status == 304 {
                fetch.delivery = .discarding(.notModified(updated.served, kept: updated.kept, forward: forward))
                phase = .fetching(fetch)
                return
            }
            if context.request.method == "HEAD", head.status == 200 {
                // §4.3.5: a 200 to HEAD freshens the stored GET it agrees with, else outdates it.
                if !Revalidation.headAgrees(head, with: entry) {
                    actions.append(.invalidate(key: entry.key))
                } else if let kept = updated.kept {
                    actions.append(.refreshStored(kept))
                }
            }
        }
        var plan = JSONBodyDelivery.Plan.pass
        if context.transform != nil {
            plan = JSONBodyDelivery.plan(for: head, request: context.request, limit: context.transformLimit)
        }
        fetch.delivery = .streaming
        phase = .fetching(fetch)
        actions.append(.deliverHead(head, plan))
    }

    private mutating func completed(_ fetch: ExchangePhase.Fetch, now: Double, into actions: inout [Action]) {
        switch fetch.delivery {
        case .discarding(.originError(let status)):
            actions += serveStale(fetch, originStatus: status, now: now) ?? [.endResponse]
        case .discarding(.otherRepresentation):
            // The stored response cannot be reused as it is: the origin is asked again, plainly.
            var again = fetch
            again.requestTime = now
            again.delivery = .awaitingHead
            phase = .fetching(again)
            actions.append(.fetch(conditions: []))
        case .discarding(.notModified(let entry, let kept, let forward)):
            phase = .servingStored(.revalidated)
            if let release = releasing(fetch) { actions.append(release) }
            if let kept { actions.append(.refreshStored(kept)) }
            actions.append(.setCacheStatus(CacheStatus(.forward(forward), forwardStatus: 304)))
            actions.append(serve(entry, age: entry.age(at: now), fromUpstream: true))
        case .awaitingHead, .streaming, .orphaned:
            actions.append(.commitStore)
            if let release = releasing(fetch) { actions.append(release) }
            actions.append(.endResponse)
        }
    }

    private mutating func failed(
        _ fetch: ExchangePhase.Fetch, _ failure: SluiceError, ownError: SluiceError?, now: Double
    ) -> [Action] {
        var error = ownError ?? failure
        let origin = Self.originFailureStatus(failure)
        if ownError == nil, origin.covered {
            var discarded: Int?
            if case .discarding(.originError(let status)) = fetch.delivery { discarded = status }
            if let served = serveStale(fetch, originStatus: origin.originStatus ?? discarded, now: now) {
                return served
            }
            if case .gatewayTimeout = fetch.onOriginFailure, origin.originStatus == nil {
                error = .upstreamFailed(
                    reason: .timedOut(
                        detail:
                            "The stored response must be revalidated (must-revalidate) and the origin failed: \(Problem(failure).detail)"
                    ))
            }
        }
        return [.abandonStore, .fail(error)]
    }

    /// The stale entry kept for an origin failure answers, if there is one and nothing of the
    /// origin's response went out yet; `nil` otherwise.
    private mutating func serveStale(_ fetch: ExchangePhase.Fetch, originStatus: Int?, now: Double) -> [Action]? {
        guard case .serveStale(let entry) = fetch.onOriginFailure else { return nil }
        if case .streaming = fetch.delivery { return nil }
        phase = .servingStored(.staleIfError)
        let status = CacheStatus(.forward(.stale), forwardStatus: originStatus, detail: "stale-if-error")
        return [.abandonStore] + (releasing(fetch).map { [$0] } ?? []) + [
            .setCacheStatus(status), serve(entry, age: entry.age(at: now), fromUpstream: true),
        ]
    }

    /// The store step's decision at the head: remember or forget the key as uncacheable, and
    /// release the waiters at once when they cannot be given this response.
    mutating func storing(_ fetch: ExchangePhase.Fetch, _ start: StoreStart, into actions: inout [Action]) {
        switch start {
        case .shared:
            if let key = cacheKey { actions.append(.forgetUncacheable(key: key)) }
            if case .leading(let key) = fetch.collapse { actions.append(.shareWhileWriting(key: key)) }
        case .notShareable:
            if let key = cacheKey { actions.append(.rememberUncacheable(key: key)) }
            if let release = releasing(fetch) { actions.append(release) }
        case .failed:
            if let release = releasing(fetch) { actions.append(release) }
        }
    }

    private mutating func finished(_ outcome: ExchangePhase.Outcome, into actions: inout [Action]) {
        switch phase {
        case .awaitingCollapse(let key, _): actions.append(.leave(key: key))
        case .fetching(let fetch):
            if fetch.delivery.isOrphaned { return }  // its end is the fetch's, not the client's
            if let release = releasing(fetch) { actions.append(release) }
        default: break
        }
        phase = .done(outcome)
    }

    /// Whether a failure is one that `stale-if-error` covers (no connection, timeout, a bad
    /// response, or a 5xx the rule rejected), with the origin's status when there was one.
    static func originFailureStatus(_ failure: SluiceError) -> (covered: Bool, originStatus: Int?) {
        switch failure {
        case .upstreamFailed(let reason):
            if case .cancelled = reason { return (false, nil) }
            return (true, nil)
        case .validationFailed(let validation) where errorStatuses.contains(validation.status):
            return (true, validation.status)
        default:
            return (false, nil)
        }
    }
}
