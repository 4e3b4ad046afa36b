/// Purges and invalidations made while the shared tier was out: RFC 9111 §4.4 wants an unsafe
/// method's target gone from the cache, and the tier would otherwise hand the old response back
/// (to this instance and the others) once it returns. Kept as a value, replayed on the
/// reconnect before anything else is asked of the tier. Past ``keyLimit`` keys (or after a
/// glob or whole purge) the replay empties the tier: over-purging only costs misses.
struct PendingPurges: Equatable {
    /// What the replay does.
    enum Work: Equatable {
        /// Nothing waits.
        case none
        /// These keys and hosts go, each announced.
        case some(keys: Set<String>, hosts: Set<String>)
        /// Everything under the prefix goes, announced as `announcement` (`.all` or a glob).
        case everything(SharedTier.Announcement)
    }

    static let keyLimit = 10_000
    private(set) var work = Work.none

    mutating func add(key: String) {
        switch work {
        case .none: work = .some(keys: [key], hosts: [])
        case .some(var keys, let hosts):
            keys.insert(key)
            work = keys.count > Self.keyLimit ? .everything(.all) : .some(keys: keys, hosts: hosts)
        case .everything: break
        }
    }

    mutating func add(host: String) {
        switch work {
        case .none: work = .some(keys: [], hosts: [host.lowercased()])
        case .some(let keys, var hosts):
            hosts.insert(host.lowercased())
            work = hosts.count > Self.keyLimit ? .everything(.all) : .some(keys: keys, hosts: hosts)
        case .everything: break
        }
    }

    /// A whole (or glob) purge: everything goes; two different ones announce `.all`.
    mutating func addEverything(_ announcement: SharedTier.Announcement) {
        if case .everything(let earlier) = work, earlier != announcement {
            work = .everything(.all)
        } else {
            work = .everything(announcement)
        }
    }

    /// The work, leaving nothing pending.
    mutating func take() -> Work {
        defer { work = .none }
        return work
    }
}
