import EventIO

/// Collapsed forwarding (RFC 9211's `collapsed`): per cache key, the exchange fetching it and
/// those waiting for it. Loop-confined.
final class Collapser {
    private var leaders: Set<String> = []
    private var waiters: [String: [Exchange]] = [:]

    /// Exchanges waiting now (for tests and stats).
    var waiting: Int { waiters.values.reduce(0) { $0 + $1.count } }

    /// Queues `exchange` behind the key's fetch; `false` when nobody fetches it.
    func join(_ key: String, _ exchange: Exchange) -> Bool {
        guard leaders.contains(key) else { return false }
        waiters[key, default: []].append(exchange)
        return true
    }

    /// `key` is being fetched now.
    func lead(_ key: String) { leaders.insert(key) }

    /// The fetch is done with the cache: every waiter looks again, at the next loop turn (never
    /// inside a libcurl callback).
    func release(_ key: String, loop: EventLoop) {
        leaders.remove(key)
        guard let queued = waiters.removeValue(forKey: key) else { return }
        loop.callSoon {
            for exchange in queued { exchange.resumeAfterCollapse() }
        }
    }

    /// A waiter's client went away.
    func leave(_ key: String, _ exchange: Exchange) {
        waiters[key]?.removeAll { $0 === exchange }
    }
}
