/// The leader whose client left goes on for its waiters (collapsed forwarding): when it may, and
/// what its events do then.
extension ExchangeMachine {
    // MARK: - Orphaned leader

    static let orphanCancelled = SluiceError.upstreamFailed(
        reason: .cancelled(detail: "the client left and its waiters cannot be given the response"))

    /// A leader whose client leaves goes on for its waiters while its response may still reach
    /// them: before the head, or while an entry is being written for them (a leader still
    /// `leading` after the head is storing a shareable response). A revalidation goes on too.
    /// Before the head, only for exchanges waiting behind it: a request nobody waits for any
    /// more is cancelled, or clients that reset streams as fast as they open them (rapid reset)
    /// would leave a transfer running for each. With the head, the body goes on into the cache.
    static func mayOrphan(_ fetch: ExchangePhase.Fetch, othersWait: Bool = true) -> Bool {
        guard case .leading = fetch.collapse else { return false }
        switch fetch.delivery {
        case .awaitingHead: return othersWait
        case .streaming: return true
        case .discarding, .orphaned: return false
        }
    }

    /// The key this exchange fetches for others (collapsed forwarding), if it leads.
    var leadingKey: String? {
        guard case .fetching(let fetch) = phase, case .leading(let key) = fetch.collapse else { return nil }
        return key
    }

    /// The orphaned leader's events: store what may be shared, release the waiters, end.
    mutating func orphaned(_ fetch: ExchangePhase.Fetch, _ event: Event) -> [Action] {
        switch event {
        case .responseHead(let head, let now):
            if head.status == 304, case .sluice(let entry, _) = fetch.revalidating, let cache = context.cache {
                let kept = freshened(entry, by: head, fetch, cache, now: now).kept
                return endOrphan(fetch, .completed, first: kept.map { [.refreshStored($0)] } ?? [])
            }
            var updated = fetch
            updated.revalidating = nil
            phase = .fetching(updated)
            return [.storeOnly(head)]
        case .storing(let start):
            var actions: [Action] = []
            storing(fetch, start, into: &actions)
            // Not shareable: the waiters were released, and nobody needs the rest of the response.
            if case .fetching(let current) = phase, case .none = current.collapse {
                phase = .done(.failed)
                actions += [.cancelUpstream(Self.orphanCancelled), .endOrphan]
            }
            return actions
        case .storeEnded:
            return endOrphan(fetch, .failed, first: [.cancelUpstream(Self.orphanCancelled)])
        case .upstreamCompleted(nil, _, _):
            return endOrphan(fetch, .completed, first: [.commitStore])
        case .upstreamCompleted(.some, _, _):
            return endOrphan(fetch, .failed, first: [.abandonStore])
        default:
            // The client side is gone: client events and late ones change nothing.
            return []
        }
    }

    private mutating func endOrphan(
        _ fetch: ExchangePhase.Fetch, _ outcome: ExchangePhase.Outcome, first: [Action]
    ) -> [Action] {
        let release = releasing(fetch).map { [$0] } ?? []
        phase = .done(outcome)
        return first + release + [.endOrphan]
    }

    /// The fetch is done with the cache: waiters look again (once).
    mutating func releasing(_ fetch: ExchangePhase.Fetch) -> Action? {
        guard case .leading(let key) = fetch.collapse else { return nil }
        var fetch = fetch
        fetch.collapse = .none
        if case .fetching = phase { phase = .fetching(fetch) }
        return .release(key: key)
    }
}
