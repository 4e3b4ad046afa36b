/// Purges and invalidations made while the shared tier was out: RFC 9111 §4.4 wants an unsafe
/// method's target gone from the cache, and the tier would otherwise hand the old response back
/// (to this instance and the others) once it returns. Kept as a value, replayed on the
/// reconnect before anything else is asked of the tier. Past ``keyLimit`` keys or hosts (a
/// long outage under many writes: about 10 MB kept) the replay empties the tier and announces
/// it, so every instance empties its own cache too; a glob or whole purge is replayed as made.
struct PendingPurges {
    /// What the replay does.
    enum Work: Equatable, Sendable {
        /// Nothing waits.
        case none
        /// These keys and hosts go, each announced.
        case some(keys: Set<String>, hosts: Set<String>)
        /// Everything under the prefix goes, announced as `announcement` (`.all` or a glob).
        case everything(SharedTier.Announcement)
    }

    static let keyLimit = 100_000
    // Kept apart (not in `Work`'s payload): a set inside an enum is copied at each insertion.
    private var keys: Set<String> = []
    private var hosts: Set<String> = []
    private var everything: SharedTier.Announcement?

    /// What the replay would do now.
    var work: Work {
        if let everything { return .everything(everything) }
        return keys.isEmpty && hosts.isEmpty ? .none : .some(keys: keys, hosts: hosts)
    }

    mutating func add(key: String) {
        guard everything == nil else { return }
        keys.insert(key)
        if keys.count > Self.keyLimit { addEverything(.all) }
    }

    mutating func add(host: String) {
        guard everything == nil else { return }
        hosts.insert(host.lowercased())
        if hosts.count > Self.keyLimit { addEverything(.all) }
    }

    /// A whole (or glob) purge: everything goes; two different ones announce `.all`.
    mutating func addEverything(_ announcement: SharedTier.Announcement) {
        if let earlier = everything, earlier != announcement {
            everything = .all
        } else {
            everything = announcement
        }
        keys = []
        hosts = []
    }

    /// The work, leaving nothing pending.
    mutating func take() -> Work {
        defer {
            keys = []
            hosts = []
            everything = nil
        }
        return work
    }
}
