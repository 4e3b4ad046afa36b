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
    private var seq: Int64 = 0
    private var buffer: [UInt8] = []
    private(set) var size: Int64 = 0
    private var failed = false

    static let chunkSize = 64 * 1024

    init(store: CacheStore, entry: Int64, key: String, variant: String, limit: Int64, expectedLength: Int64?) {
        self.store = store
        self.entry = entry
        self.key = key
        self.variant = variant
        self.limit = limit
        self.expectedLength = expectedLength
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

    /// The body ended normally: commit if it is whole.
    func finish() -> CachePolicy.Refusal? {
        guard !failed, flush() else { return .incomplete }
        if let expectedLength, expectedLength != size {
            abort()
            return .incomplete
        }
        store.commit(entry: entry, key: key, variant: variant, size: size)
        return nil
    }

    /// The transfer failed: nothing of it stays.
    func abort() {
        failed = true
        buffer = []
        store.discard(entry)
    }
}
