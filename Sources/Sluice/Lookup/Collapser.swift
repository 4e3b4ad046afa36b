import EventIO

/// An exchange that waits behind another's fetch of the same key.
protocol CollapseWaiter: AnyObject {
    /// The fetch is done with the cache (or the wait timed out): look again.
    func collapseReleased()
}

/// Collapsed forwarding (RFC 9211's `collapsed`): per cache key, whether an exchange fetches it
/// and who waits for it. Loop-confined.
final class Collapser {
    private var leaders: Set<String> = []
    private var waiters: [String: [any CollapseWaiter]] = [:]

    /// Exchanges waiting now (for tests and stats).
    var waiting: Int { waiters.values.reduce(0) { $0 + $1.count } }

    /// Whether an exchange fetches `key` now.
    func isFetching(_ key: String) -> Bool { leaders.contains(key) }

    /// Queues `waiter` behind the key's fetch; `false` when nobody fetches it.
    func join(_ key: String, _ waiter: any CollapseWaiter) -> Bool {
        guard leaders.contains(key) else { return false }
        waiters[key, default: []].append(waiter)
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
            for waiter in queued { waiter.collapseReleased() }
        }
    }

    /// A waiter's client went away.
    func leave(_ key: String, _ waiter: any CollapseWaiter) {
        waiters[key]?.removeAll { $0 === waiter }
    }
}
