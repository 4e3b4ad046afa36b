/// Writes one response into the cache as its body streams: chunks of up to 64 KiB, the entry made
/// visible only by ``finish()`` when the body is whole and within the size limit.
final class CacheWriter {
    let store: CacheStore
    let entry: Int64
    let key: String
    let variant: String
    let limit: Int64
    /// `Content-Length` of the origin's response, when it framed the body that way.
    let expectedLength: Int64?
    /// The header fields as received (what the will-cache hook is shown).
    let proposedHeaders: HTTPFields
    private var seq: Int64 = 0
    private var buffer: [UInt8] = []
    private(set) var size: Int64 = 0
    private var failed = false

    static let chunkSize = 64 * 1024

    init(store: CacheStore, entry: Int64, new: CacheStore.NewEntry) {
        self.store = store
        self.entry = entry
        key = new.key
        variant = new.variant
        limit = new.limit
        expectedLength = new.expectedLength
        proposedHeaders = new.proposedHeaders
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
        if buffer.count >= CacheWriter.chunkSize, !flush() { return .incomplete }
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
        return true
    }

    /// The body ended normally: commit if it is whole and the will-cache hook agrees.
    /// - Parameter decision: the hook's answer: `.some(nil)` refuses, a proposal may change the
    ///   stored header fields or give a lifetime; `nil` = no hook ran.
    func finish(decision: CachedResponseProposal?? = nil) -> CachePolicy.Refusal? {
        guard !failed, flush() else { return .incomplete }
        if let expectedLength, expectedLength != size {
            abort()
            return .incomplete
        }
        var headers: HTTPFields?
        var ttl: Int64?
        if let decision {
            guard let proposal = decision else {
                abort()
                return .rule
            }
            ttl = proposal.lifetime
            if proposal.response.headers != proposedHeaders {
                var changed = proposal.response.headers
                HopByHop.strip(&changed)
                headers = changed
            }
        }
        store.commit(entry: entry, key: key, variant: variant, size: size, headers: headers, ttl: ttl)
        return nil
    }

    /// The transfer failed: nothing of it stays.
    func abort() {
        failed = true
        buffer = []
        store.discard(entry)
    }
}
