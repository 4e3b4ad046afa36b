/// Writes one response into the cache as its body streams: chunks of up to 64 KiB, the entry made
/// visible only by ``finish()`` when the body is whole and within the size limit.
final class CacheWriter: KeepsStoredHead {
    /// The contract verdict the response was served with (stored beside it).
    var contract: String?
    let store: CacheStore
    let entry: Int64
    /// The head as stored, its key and times: what collapsed waiters are given while the body
    /// is still being written (read-while-write).
    let stored: StoredHead
    let limit: Int64
    /// `Content-Length` of the origin's response, when it framed the body that way.
    let expectedLength: Int64?
    /// The header fields as received (what the will-cache hook is shown).
    let proposedHeaders: HTTPFields

    /// How far the entry got: readers while it is written stream the chunks flushed so far.
    enum Progress: Equatable {
        case writing
        /// Committed: every chunk is in the file.
        case complete
        /// Given up: its chunks are gone.
        case abandoned
    }
    private(set) var progress = Progress.writing
    /// `private`, or a cookie kept from others: stored for this instance's own use only, never
    /// given to collapsed waiters or the shared tier.
    var personal = false
    /// Never written to the shared tier, which other instances serve to anyone (``personal``,
    /// any `Set-Cookie`, and in `cache.mode: private` whatever a shared cache would not store).
    var keptFromTier = false
    /// Told after each flushed chunk and once at the end (never inside this call's caller's
    /// stack for long: a reader only schedules its pump).
    private var watchers: [ObjectIdentifier: () -> Void] = [:]
    private var seq: Int64 = 0
    private var buffer: [UInt8] = []
    private(set) var size: Int64 = 0
    private var failed = false

    static let chunkSize = 64 * 1024

    init(store: CacheStore, entry: Int64, new: CacheStore.NewEntry) {
        self.store = store
        self.entry = entry
        stored = new.stored
        limit = new.limit
        expectedLength = new.expectedLength
        proposedHeaders = new.proposedHeaders
    }

    /// Chunks in the file so far (`0..<flushedChunks` may be read while the entry is written).
    var flushedChunks: Int64 { seq }

    /// `grew` runs after each flushed chunk and at the end, until ``unwatch(_:)``.
    func watch(_ reader: AnyObject, grew: @escaping () -> Void) { watchers[ObjectIdentifier(reader)] = grew }

    func unwatch(_ reader: AnyObject) { watchers[ObjectIdentifier(reader)] = nil }

    private func tellWatchers() {
        for grew in watchers.values { grew() }
    }

    /// Adds body bytes; a refusal ends the entry (too large, or the database refused).
    func append(_ bytes: UnsafeRawBufferPointer) -> CachePolicy.Refusal? {
        guard !failed else { return .incomplete }
        size += Int64(bytes.count)
        if size > limit {
            abort()
            return .tooLarge
        }
        buffer.append(contentsOf: bytes)
        if buffer.count >= CacheWriter.chunkSize, !flush() {
            abort()
            return .incomplete
        }
        return nil
    }

    private func flush() -> Bool {
        guard !buffer.isEmpty else { return true }
        guard store.append(entry: entry, seq: seq, data: buffer) else {
            failed = true
            return false
        }
        seq += 1
        buffer.removeAll(keepingCapacity: true)
        tellWatchers()
        return true
    }

    /// The body ended normally: commit if it is whole and the will-cache hook agrees.
    /// - Parameter decision: the will-cache hook's answer: a proposal may change the stored
    ///   header fields or give a lifetime; ``CachingDecision/notAsked`` by default.
    func finish(decision: CachingDecision = .notAsked) -> CachePolicy.Refusal? {
        guard !failed, flush() else {
            abort()
            return .incomplete
        }
        if let expectedLength, expectedLength != size {
            abort()
            return .incomplete
        }
        var headers: HTTPFields?
        var ttl: Int64?
        switch decision {
        case .notAsked:
            break
        case .doNotStore:
            abort()
            return .rule
        case .store(let proposal):
            ttl = proposal.lifetime
            if proposal.response.headers != proposedHeaders {
                var changed = proposal.response.headers
                CachePolicy.stripUnstorable(&changed)
                headers = changed
            }
        }
        store.commit(
            entry: entry, key: key, variant: variant, size: size, headers: headers, ttl: ttl, contract: contract)
        progress = .complete
        tellWatchers()
        watchers = [:]
        return nil
    }

    /// The transfer failed: nothing of it stays.
    func abort() {
        guard progress == .writing else { return }
        failed = true
        buffer = []
        store.discard(entry)
        progress = .abandoned
        tellWatchers()
        watchers = [:]
    }
}
