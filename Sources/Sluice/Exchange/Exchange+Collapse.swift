import EventIO

/// The driver's side of the cache tiers' answers and of collapsed forwarding: a lookup's
/// candidates, a release, an entry offered while it is written.
extension Exchange: CacheLookupWaiter, CollapseWaiter {
    func cacheTier(didFind candidates: [CacheStore.Entry]) {
        guard case .lookingUp(let key, _) = machine.phase else { return }
        let now = env.clock()
        let view = ExchangeMachine.CollapseView(
            fetching: env.collapser.isFetching(key), uncacheable: env.collapser.isUncacheable(key, now: now))
        // A `Range` may be answered by a stored piece when no complete response answers it.
        let pieces =
            request.method == "GET" && request.headers.contains(.range) ? env.cache?.pieces(of: key) ?? [] : []
        run(.lookedUp(candidates, pieces: pieces, collapse: view, now: now))
    }

    func collapseMayStream(_ writer: CacheWriter) {
        guard case .awaitingCollapse = machine.phase, writer.progress == .writing else { return }
        run(.collapseMayStream(writer))
    }

    func collapseReleased() {
        guard case .awaitingCollapse = machine.phase else { return }
        if case .collapse = waiting.reason { waiting.cancel() }
        run(.collapseReleased)
    }
}
