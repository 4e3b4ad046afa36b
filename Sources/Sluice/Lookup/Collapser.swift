import EventIO

/// An exchange that waits behind another's fetch of the same key.
protocol CollapseWaiter: AnyObject {
    /// The fetch is done with the cache (or the wait timed out): look again.
    func collapseReleased()
    /// The fetch is writing an entry that may be shared: the waiter may stream it as it is
    /// written (read-while-write), or keep waiting for the release.
    func collapseMayStream(_ writer: CacheWriter)
}

/// Collapsed forwarding (RFC 9211's `collapsed`): per cache key, whether an exchange fetches it,
/// who waits for it (Varnish's waiting list), and whether it was found not storable (hit-for-miss).
/// Loop-confined.
final class Collapser {
    private var leaders: Set<String> = []
    private var waiters: [String: [any CollapseWaiter]] = [:]
    /// Keys whose responses could not be stored or shared, until when (Varnish's hit-for-miss).
    private var uncacheable: [String: Double] = [:]
    /// The key last found uncacheable, and until when, kept beside ``uncacheable``: one URL found
    /// not storable again and again (a polled no-store endpoint) is looked up and renewed without
    /// hashing it. It shadows the table's entry for the same key.
    private var lastUncacheable: (key: String, until: Double)?
    /// Entries being written by a key's leader that its waiters may stream (read-while-write).
    private var live: [String: CacheWriter] = [:]
    /// Leaders whose clients left, kept alive while they fetch for their waiters.
    private var orphans: [ObjectIdentifier: AnyObject] = [:]
    /// Most keys remembered as uncacheable; past it the expired ones go, then all of them.
    static let uncacheableLimit = 65_536
    /// Most bytes of those keys (URLs): 65,536 of 7 KB each held 460 MB that a client could
    /// fill with distinct no-store URLs and never get back.
    static let uncacheableByteLimit = 8 << 20
    /// The bytes of the keys in ``uncacheable``.
    private var uncacheableBytes = 0

    /// Exchanges waiting now (for tests and stats).
    var waiting: Int { waiters.values.reduce(0) { $0 + $1.count } }

    /// Whether exchanges wait behind the fetch of `key`.
    func hasWaiters(_ key: String) -> Bool { !(waiters[key]?.isEmpty ?? true) }

    /// Whether an exchange fetches `key` now.
    func isFetching(_ key: String) -> Bool { !leaders.isEmpty && leaders.contains(key) }

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
        // The writers' and waiters' tables are looked at only when they hold something: hashing
        // the URL is the cost here.
        leaders.remove(key)
        if !live.isEmpty { live[key] = nil }
        guard !waiters.isEmpty, let queued = waiters.removeValue(forKey: key) else { return }
        loop.callSoon {
            for waiter in queued { waiter.collapseReleased() }
        }
    }

    /// The leader of `key` writes an entry its waiters may be given: they are told at the next loop
    /// turn (never inside a libcurl callback); waiters that join later are told as they join.
    func share(_ key: String, writer: CacheWriter, loop: EventLoop) {
        guard leaders.contains(key) else { return }
        live[key] = writer
        guard let queued = waiters[key], !queued.isEmpty else { return }
        loop.callSoon {
            for waiter in queued { waiter.collapseMayStream(writer) }
        }
    }

    /// The entry `key`'s leader is writing for its waiters, if any.
    func liveWriter(_ key: String) -> CacheWriter? { live.isEmpty ? nil : live[key] }

    /// Whether `key` was found not storable or shareable within its `cache.uncacheable_ttl`.
    func isUncacheable(_ key: String, now: Double) -> Bool {
        if let last = lastUncacheable, last.key == key {
            if last.until > now { return true }
            lastUncacheable = nil
            dropUncacheable(key)
            return false
        }
        guard !uncacheable.isEmpty, let until = uncacheable[key] else { return false }
        if until > now { return true }
        dropUncacheable(key)
        return false
    }

    private func dropUncacheable(_ key: String) {
        guard !uncacheable.isEmpty, uncacheable.removeValue(forKey: key) != nil else { return }
        uncacheableBytes -= key.utf8.count
    }

    /// `key`'s response could not be stored or shared: its misses do not collapse until `until`.
    func rememberUncacheable(_ key: String, until: Double, now: Double) {
        if let last = lastUncacheable {
            guard last.key != key else {
                lastUncacheable = (key, until)
                return
            }
            if uncacheable.updateValue(last.until, forKey: last.key) == nil { uncacheableBytes += last.key.utf8.count }
        }
        // A new key: a full table makes room first (the expired keys, else all of them).
        let full = uncacheable.count >= Self.uncacheableLimit || uncacheableBytes >= Self.uncacheableByteLimit
        if full, uncacheable[key] == nil {
            uncacheable = uncacheable.filter { $0.value > now }
            if uncacheable.count >= Self.uncacheableLimit
                || uncacheable.keys.reduce(0, { $0 + $1.utf8.count })
                    >= Self.uncacheableByteLimit / 2
            {
                uncacheable.removeAll()
            }
            uncacheableBytes = uncacheable.keys.reduce(0) { $0 + $1.utf8.count }
        }
        lastUncacheable = (key, until)
    }

    /// A response for `key` is being stored for everyone: its misses collapse again.
    func forgetUncacheable(_ key: String) {
        if lastUncacheable?.key == key { lastUncacheable = nil }
        dropUncacheable(key)
    }

    /// Keeps a leader whose client left alive until its fetch is over (``disown(_:)``).
    func adopt(_ orphan: AnyObject) { orphans[ObjectIdentifier(orphan)] = orphan }

    /// The orphaned fetch is over.
    func disown(_ orphan: AnyObject) { orphans[ObjectIdentifier(orphan)] = nil }

    /// Leaders whose clients left, fetching for their waiters.
    var orphanCount: Int { orphans.count }

    /// A waiter's client went away.
    func leave(_ key: String, _ waiter: any CollapseWaiter) {
        waiters[key]?.removeAll { $0 === waiter }
    }
}
