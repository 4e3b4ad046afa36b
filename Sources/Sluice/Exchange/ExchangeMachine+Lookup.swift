/// The lookup's decisions: serve a stored response (in which form), or go upstream (collapsed or not).
extension ExchangeMachine {
    // MARK: - Lookup

    /// Whether the request came through two Sluices already (its `Via`): it never waits behind
    /// another fetch of its key, which may be its own, one round earlier, when two proxies are
    /// each other's parent (they would wait for each other until the loop's depth refuses it).
    /// One Sluice before this one is a child proxy: its requests still collapse here.
    static func cameThroughSluices(_ context: Context) -> Bool {
        context.request.headers.contains(.via) && Forwarding.ownHops(context.request.headers) >= 2
    }

    mutating func lookedUp(
        key: String, _ candidates: [CacheStore.Entry], pieces: [CacheStore.Entry], collapse: CollapseView,
        afterCollapse: CacheStatus.Forward?, mayCollapse: Bool, now: Double, into actions: inout [Action]
    ) {
        let settings = context.cache?.freshness ?? .init()
        let request = Freshness.Request(context.request.headers)
        if !otherVariants.isEmpty { otherVariants = [] }  // a look after a collapse wait starts again
        let decision = Freshness.decide(candidates, request: request, settings: settings, now: now)
        if !pieces.isEmpty, !decision.servesStored,
            case .fresh(let piece, let age, let ttl, let detail) = Freshness.decide(
                pieces, request: request, settings: settings, now: now),
            let stored = ByteRange.Piece(piece.headers),
            ByteRange.answer(context.request.headers, piece: stored, stored: piece.headers) != nil
        {
            // §3.4: a fresh stored piece that holds every byte asked for answers the range.
            return serveHit(
                piece, age: age, ttl: ttl, detail: detail ?? "partial", afterCollapse: nil, into: &actions)
        }
        var forward: CacheStatus.Forward
        var fetch = ExchangePhase.Fetch(
            requestTime: now, revalidating: nil, onOriginFailure: .fail, collapse: .none,
            delivery: .awaitingHead)
        switch decision {
        case .fresh(let entry, let age, let ttl, let detail):
            return serveHit(entry, age: age, ttl: ttl, detail: detail, afterCollapse: afterCollapse, into: &actions)
        case .staleWhileRevalidate(let entry, let age, let ttl):
            // Not for `only-if-cached`, which asks that the origin not be contacted (§5.2.1.7).
            if context.request.method == "GET", !request.control.onlyIfCached {
                // The key's other variants: a 304 with a strong validator updates them too (§4.3.4).
                let others = candidates.count > 1 ? candidates.filter { $0 !== entry } : []
                actions.append(.refreshInBackground(entry, others: others))
            }
            return serveHit(
                entry, age: age, ttl: ttl, detail: "stale-while-revalidate", afterCollapse: afterCollapse,
                into: &actions)
        case .revalidate(let entry, let conditions, let onFailure, let reason):
            forward = reason
            fetch.revalidating = conditions.isEmpty ? .client(entry) : .sluice(entry, forward: reason)
            fetch.onOriginFailure = onFailure
            if candidates.count > 1 { otherVariants = candidates.filter { $0 !== entry } }
        case .miss(let miss):
            forward = miss.forward
            // A client's own conditions may get a 304 that names a stored variant (a vary-miss).
            if !candidates.isEmpty, context.request.headers.contains(.ifNoneMatch) { otherVariants = candidates }
        }
        if request.control.onlyIfCached {
            actions.append(.setCacheStatus(.forward(forward, detail: "only-if-cached")))
            return actions.append(
                .fail(
                    .upstreamFailed(reason: .timedOut(detail: "only-if-cached: no stored response fits the request."))))
        }
        actions.append(.setCacheStatus(.forward(forward)))
        // Collapsed forwarding (Varnish's waiting list): a miss on a key that another exchange
        // fetches waits for it; a GET miss leads, unless the key was just found not storable
        // (hit-for-miss). Requests that would not take a stored answer (`no-cache`), ranges, and
        // the look after a wait never collapse.
        if mayCollapse, !request.noCache, context.cache?.collapseForwarding == true {
            if collapse.fetching {
                phase = .awaitingCollapse(key: key, forward: forward)
                return actions.append(.wait(key: key))
            }
            if context.request.method == "GET", !collapse.uncacheable {
                fetch.collapse = .leading(key: key)
                actions.append(.lead(key: key))
            }
        }
        phase = .fetching(fetch)
        var conditions: [HTTPFields.Field] = []
        if case .sluice(let entry, _) = fetch.revalidating { conditions = Revalidation.conditions(for: entry) }
        actions.append(.countMiss)
        actions.append(.fetch(conditions: conditions))
    }

    mutating func serveHit(
        _ entry: CacheStore.Entry, age: Int64, ttl: Int64, detail: String?, afterCollapse: CacheStatus.Forward?,
        into actions: inout [Action]
    ) {
        phase = .servingStored(.hit)
        let status =
            afterCollapse.map { CacheStatus(.forward($0), collapsed: true) }
            ?? CacheStatus(.hit(ttl: ttl), detail: detail ?? (entry.fromSharedTier ? "shared" : nil))
        actions.append(.setCacheStatus(status))
        actions.append(serve(entry, age: age, fromUpstream: false))
    }

    /// How a stored response answers the client (``StoredAnswer``), or the failure that replaces
    /// it: the rule's enforce verdict is part of the decision.
    func answer(_ head: ResponseHead, size: Int64, fromUpstream: Bool) -> Result<StoredAnswer, SluiceError> {
        let verdict = context.acceptance.flatMap { acceptance in
            acceptance.onReject == .enforce
                ? ResponseValidator.validate(
                    head, method: context.request.method, requestHeaders: context.request.headers,
                    acceptance: acceptance, rule: context.ruleName) : nil
        }
        let exchange = StoredAnswer.Request(
            request: context.request, transform: context.transform, transformLimit: context.transformLimit,
            validated: context.acceptance != nil || context.checksContract)
        return StoredAnswer.decide(head, size: size, for: exchange, verdict: verdict, fromUpstream: fromUpstream)
    }

    /// Serves `entry` in the form ``answer(_:size:fromUpstream:)`` decides, or fails.
    func serve(_ entry: CacheStore.Entry, age: Int64, fromUpstream: Bool) -> Action {
        switch answer(entry.head, size: entry.size, fromUpstream: fromUpstream) {
        case .success(let answer): .serve(entry, age: age, as: answer)
        case .failure(let error): .fail(error)
        }
    }
}
