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
    func lookup(_ key: String, for waiter: any CacheLookupWaiter) -> [CacheStore.Entry]?
    /// A small body whole (kept in memory), or `nil`: read it with ``chunk(of:at:)``.
    func wholeBody(_ entry: CacheStore.Entry) -> HotBody?
    /// Body chunk `seq` of an entry (`nil` past the end or on error).
    func chunk(of entry: EntryRef, at seq: Int64) -> [UInt8]?
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

    func lookup(_ key: String, for waiter: any CacheLookupWaiter) -> [CacheStore.Entry]? {
        guard file.hasEntries(key) else { return [] }
        return local(key)
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

    func beginWrite(_ entry: CacheStore.NewEntry) -> CacheWriter? {
        guard let row = file.begin(entry) else { return nil }
        return CacheWriter(store: file, entry: row, new: entry)
    }

    func refresh(_ entry: CacheStore.Entry) { file.refresh(entry) }
    func invalidate(key: String) {
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
