import SQLite

/// Responses copied whole from the shared tier (``TieredCache``): written with the times they
/// were first stored with, several in one transaction.
extension CacheStore {
    /// Several complete responses in one transaction (copies that arrived in one loop turn: one
    /// WAL commit for all); an entry per response, `nil` where it could not be written.
    func insertComplete(_ responses: [(new: NewEntry, body: [UInt8], ttl: Int64?)]) -> [Entry?] {
        var written: [Entry?] = []
        var added: Int64 = 0
        flushPending()  // the ledger's own transaction, before this one
        do {
            try database.transaction {
                for (new, body, ttl) in responses {
                    let (entry, removed) = try insertOne(new, body: body, ttl: ttl)
                    if let entry { added += try footprint(of: entry.ref.row) - removed }
                    written.append(entry)
                }
            }
        } catch {
            warnSkipped(error)
            return responses.map { _ in nil }
        }
        totalBytes += added
        evictIfNeeded()
        return written
    }

    /// One response inside the caller's transaction: the row, its chunks, the older entry of
    /// the same key and variant replaced; the entry as a lookup would find it.
    private func insertOne(_ new: NewEntry, body: [UInt8], ttl: Int64?) throws -> (Entry?, removed: Int64) {
        guard let row = begin(new, flushFirst: false) else { return (nil, 0) }
        var seq: Int64 = 0
        var offset = 0
        repeat {
            let end = min(body.count, offset + CacheWriter.chunkSize)
            defer { insertChunk.reset() }
            try insertChunk.bind(row, at: 1)
            try insertChunk.bind(seq, at: 2)
            try insertChunk.bind(Array(body[offset..<end]), at: 3)
            try insertChunk.step()
            seq += 1
            offset = end
        } while offset < body.count
        let removed = try replaceComplete(key: new.stored.key, variant: new.stored.variant)
        let mark = try database.prepare("UPDATE entries SET complete=1, size=?2, ttl=?3 WHERE id=?1")
        try mark.bind(row, at: 1)
        try mark.bind(Int64(body.count), at: 2)
        if let ttl { try mark.bind(ttl, at: 3) }
        try mark.step()
        noteStored(key: new.stored.key)
        var stored = new.stored
        stored.ttl = ttl
        return (
            Entry(stored: stored, ref: EntryRef(row: row), size: Int64(body.count), facts: facts(stored.headers)),
            removed
        )
    }
}
