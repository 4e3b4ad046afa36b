import EventIO

/// Where a stored entry's body is, for the tier that holds it: opaque to everything but that tier.
struct EntryRef: Hashable {
    /// The file tier's row.
    let row: Int64
}

/// Receives the answer of a lookup that a tier could not give at once.
protocol CacheLookupWaiter: AnyObject {
    /// The key's complete entries, newest first.
    func cacheTier(didFind candidates: [CacheStore.Entry])
}

/// One cache tier as an exchange sees it: asynchronous lookup, bodies by entry reference, a write
/// that becomes visible only when committed, refresh after a 304, invalidation. Loop-confined.
protocol CacheTier: AnyObject {
    /// Whether the key has a stored entry (it is known to be cacheable).
    func hasEntries(_ key: String) -> Bool
    /// The key's complete entries, newest first, when the tier knows them now; otherwise `nil`,
    /// and `waiter` hears the answer later on the loop.
    /// `remote`: a local miss may ask a shared tier (not for a key just found not storable).
    func lookup(_ key: String, for waiter: any CacheLookupWaiter, remote: Bool) -> [CacheStore.Entry]?
    /// A small body whole (kept in memory), or `nil`: read it with ``chunk(of:at:)``.
    func wholeBody(_ entry: CacheStore.Entry) -> HotBody?
    /// Body chunk `seq` of an entry (`nil` past the end or on error).
    func chunk(of entry: EntryRef, at seq: Int64) -> [UInt8]?
    /// Holds the entry's chunks for a hit that reads them one by one, until the lease goes: a
    /// removal meanwhile hides the entry and frees it after.
    func lease(_ entry: EntryRef) -> CacheReadLease?
    /// Starts writing a response; `nil` when the tier refused (the response is still delivered).
    func beginWrite(_ entry: CacheStore.NewEntry) -> CacheWriter?
    /// Stores a head refreshed by a 304 (§4.3.4).
    func refresh(_ entry: CacheStore.Entry)
    /// Removes every stored response for a key (§4.4, purge).
    func invalidate(key: String)
    /// The stored pieces (`206`s) of a key's representation, newest first: asked for by `Range`
    /// requests only, and answered at once (pieces stay in the local tiers).
    func pieces(of key: String) -> [CacheStore.Entry]
    /// Counts a hit.
    func touch(_ entry: EntryRef, now: Double)
    /// Counts a lookup that went upstream.
    func countMiss()
    /// Records the last storing decision for a URL (`sluice cache why`).
    func recordDecision(url: String, now: Double, stored: Bool, reason: String?)
    /// Whether a remote (shared) tier may be asked on a local miss.
    var hasRemoteTier: Bool { get }
    /// A response just committed by an exchange that may share it: offered to a remote tier.
    func share(key: String, variant: String, now: Double)
    /// The client head kept for a plain GET hit of an entry (``StoredResponse/plainHead(_:age:request:cacheStatus:cache:)``).
    func hotHead(_ entry: EntryRef) -> [UInt8]?
    /// Keeps a client head next to the entry's body in memory (only while that body is kept).
    func keepHotHead(_ bytes: [UInt8], entry: EntryRef)
    /// Whether the entry's body is in memory.
    func bodyIsHot(_ entry: EntryRef) -> Bool
}

/// The local tiers composed: memory (``HotSet``: decoded entries and small bodies of recent keys)
/// over the SQLite file (``CacheStore``, the truth). Lookups ask memory first; every write goes
/// to the file, which tells memory what changed. The one place where tiers are put together.
final class TieredCache: CacheTier {
    let file: CacheStore
    let memory: HotSet

    init(file: CacheStore, memoryBudget: Int) {
        self.file = file
        let memory = HotSet(budget: memoryBudget)
        self.memory = memory
        file.onChange = { [unowned memory] change in
            switch change {
            case .key(let key): memory.forget(key)
            case .entry(let ref): memory.forget(entry: ref)
            case .everything: memory.forgetAll()
            }
        }
    }

    func hasEntries(_ key: String) -> Bool { file.hasEntries(key) }

    /// The shared tier below the file, when `cache.shared` is configured.
    var shared: SharedTier?

    func lookup(_ key: String, for waiter: any CacheLookupWaiter, remote: Bool = true) -> [CacheStore.Entry]? {
        if file.hasEntries(key) {
            let held = local(key)
            guard held.isEmpty else { return held }
            // Listed, but gone (another connection's purge: the CLI's, one another instance
            // announced): forgotten, and asked of the shared tier like any local miss.
            file.forgetKey(key)
        }
        // A local miss asks the shared tier (never longer than its timeout); what it has is
        // copied into the file and found there.
        guard remote, let shared, shared.isAvailable else { return [] }
        weak let waiter = waiter
        shared.lookup(key) { [weak self] record in
            guard let self, let waiter else { return }
            guard let record else { return waiter.cacheTier(didFind: []) }
            // Copies that arrive in one loop turn are written in one transaction at its end.
            self.copies.append((record, waiter))
            if self.copies.count == 1 { shared.loop.callSoon { [weak self] in self?.writeCopies() } }
        }
        return nil
    }

    /// Records of the shared tier waiting to be written into the file, and who waits for each.
    private var copies: [(record: SharedRecord, waiter: any CacheLookupWaiter)] = []

    /// Writes the waiting copies into the file in one transaction, with the times they were
    /// stored with, and hands each waiter its entry (nothing when it could not be written).
    private func writeCopies() {
        let batch = copies
        copies = []
        var writable: [(index: Int, new: CacheStore.NewEntry, body: [UInt8], ttl: Int64?)] = []
        for (index, (record, _)) in batch.enumerated() {
            guard let url = TargetURL(record.url), Int64(record.body.count) <= file.settings.entryLimit else {
                continue
            }
            let new = CacheStore.NewEntry(
                stored: record.stored, method: "GET", url: url, rule: nil, limit: file.settings.entryLimit,
                expectedLength: Int64(record.body.count), proposedHeaders: record.headers)
            writable.append((index, new, record.body, record.ttl))
        }
        let written = file.insertComplete(writable.map { ($0.new, $0.body, $0.ttl) })
        var entries = [CacheStore.Entry?](repeating: nil, count: batch.count)
        for (slot, entry) in zip(writable, written) {
            guard let entry else { continue }
            entry.fromSharedTier = true
            // The body is at hand: a small one goes straight to memory (the hit reads nothing).
            memory.keep(body: slot.body, entry: entry.ref)
            entries[slot.index] = entry
        }
        for (index, (_, waiter)) in batch.enumerated() { waiter.cacheTier(didFind: entries[index].map { [$0] } ?? []) }
    }

    /// A response just committed by an exchange that may share it: it goes to the shared tier
    /// too, for its freshness lifetime and stale windows, when it is small enough.
    func share(key: String, variant: String, now: Double) {
        guard let shared, shared.isAvailable,
            let entry = file.candidates(key: key).first(where: { $0.variant == variant }),
            entry.size <= shared.settings.maxEntry, let body = file.wholeBody(entry)
        else { return }
        let control = entry.facts.control
        let stale = max(
            control.staleWhileRevalidate ?? 0, control.staleIfError ?? 0, Int64(file.settings.serveStaleOnError / 1000))
        let seconds = (entry.ttl ?? entry.facts.lifetime) - entry.age(at: now) + stale
        let url = key  // the key is the URL as requested
        shared.store(
            SharedRecord(stored: entry.stored, url: url, host: TargetURL(url)?.host ?? "", body: body),
            seconds: seconds)
    }

    private func local(_ key: String) -> [CacheStore.Entry] {
        file.noticeChangesElsewhere()
        if let known = memory.entries(key) { return known }
        let entries = file.candidates(key: key)
        memory.remember(key, entries)
        return entries
    }

    func wholeBody(_ entry: CacheStore.Entry) -> HotBody? {
        if let body = memory.body(entry.ref) { return body }
        guard memory.wants(size: entry.size), let bytes = file.wholeBody(entry) else { return nil }
        memory.keep(body: bytes, entry: entry.ref)
        return memory.body(entry.ref) ?? .bytes(bytes)
    }

    func chunk(of entry: EntryRef, at seq: Int64) -> [UInt8]? { file.chunk(entry: entry.row, seq: seq) }
    func lease(_ entry: EntryRef) -> CacheReadLease? { file.lease(entry.row) }

    func beginWrite(_ entry: CacheStore.NewEntry) -> CacheWriter? {
        guard let row = file.begin(entry) else { return nil }
        return CacheWriter(store: file, entry: row, new: entry)
    }

    func refresh(_ entry: CacheStore.Entry) { file.refresh(entry) }
    func invalidate(key: String) {
        invalidateLocally(key: key)
        shared?.invalidate(key: key)
    }

    /// Drops what the file holds for a key (another instance announced its invalidation).
    func invalidateLocally(key: String) {
        file.invalidate(key: key)
        let pieces = CacheStore.piecesKey(key)
        if file.hasEntries(pieces) { file.invalidate(key: pieces) }
    }

    func pieces(of key: String) -> [CacheStore.Entry] {
        let pieces = CacheStore.piecesKey(key)
        guard file.hasEntries(pieces) else { return [] }
        return local(pieces)
    }
    func touch(_ entry: EntryRef, now: Double) { file.touch(entry.row, now: now) }
    func countMiss() { file.countMiss() }
    func recordDecision(url: String, now: Double, stored: Bool, reason: String?) {
        file.recordDecision(url: url, now: now, stored: stored, reason: reason)
    }

    // MARK: - The memory tier's client heads

    /// The client head kept for a plain GET hit of an entry (see ``StoredResponse``).
    func hotHead(_ entry: EntryRef) -> [UInt8]? { memory.head(entry) }

    /// Keeps a client head next to the entry's body in memory (only while that body is kept).
    func keepHotHead(_ bytes: [UInt8], entry: EntryRef) { memory.keep(head: bytes, entry: entry) }

    /// Whether the entry's body is in memory.
    func bodyIsHot(_ entry: EntryRef) -> Bool { memory.body(entry) != nil }

    var hasRemoteTier: Bool { shared != nil }
}

extension CacheStore {
    /// What changed in the file.
    enum Change {
        case key(String)
        case entry(EntryRef)
        /// Another process changed the file.
        case everything
    }
}
