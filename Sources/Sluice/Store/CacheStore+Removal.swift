import Logging
import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Taking responses out of the file: an entry that will not be completed, every variant of a
/// key (RFC 9111 §4.4 invalidation, a purge), and the least recently used past the capacity.
extension CacheStore {
    /// Removes an entry that will not be completed.
    func discard(_ entry: Int64) {
        try? deleteRows(entry)
    }

    /// Removes every stored response for a key (all variants): RFC 9111 §4.4 invalidation, purge.
    func invalidate(key: String) {
        do {
            totalBytes -= try database.transaction {
                let select = try database.prepare("SELECT id, footprint, complete FROM entries WHERE key=?1")
                try select.bind(key, at: 1)
                var rows: [(Int64, Int64, Bool)] = []
                while try select.step() {
                    rows.append((select.int64(at: 0), select.int64(at: 1), select.int64(at: 2) == 1))
                }
                var removed: Int64 = 0
                for (id, bytes, complete) in rows where complete {
                    try deleteRows(id)
                    removed += bytes
                }
                keys.remove(CacheStore.hash(key))
                onChange(.key(key))
                return removed
            }
        } catch {
            logger.warning("cache invalidation failed: \(error)")
        }
    }

    /// Removes an entry's rows; an entry a hit is still reading is hidden instead (marked
    /// incomplete: no lookup finds it, the next start clears it) and its rows go with the last
    /// reader (``endReading(_:)``), so a replacement, an invalidation, a purge or an eviction
    /// never cuts a response already on its way.
    func deleteRows(_ entry: Int64) throws(SQLiteError) {
        onChange(.entry(EntryRef(row: entry)))
        if readers[entry] != nil {
            let hide = try database.prepare("UPDATE entries SET complete=0 WHERE id=?1")
            try hide.bind(entry, at: 1)
            try hide.step()
            doomed.insert(entry)
            return
        }
        let chunks = try database.prepare("DELETE FROM chunks WHERE entry=?1")
        try chunks.bind(entry, at: 1)
        try chunks.step()
        let row = try database.prepare("DELETE FROM entries WHERE id=?1")
        try row.bind(entry, at: 1)
        try row.step()
    }

    /// Least recently used entries go until what they take in the file (``footprint``) fits the capacity.
    func evictIfNeeded() {
        guard totalBytes > capacity else { return }
        do {
            let oldest = try database.prepare(
                "SELECT id, footprint, key FROM entries WHERE complete=1 ORDER BY last_access ASC LIMIT 64")
            var victims: [(Int64, Int64, String)] = []
            while try oldest.step() {
                victims.append((oldest.int64(at: 0), oldest.int64(at: 1), oldest.text(at: 2) ?? ""))
            }
            let left = try database.transaction {
                var left = totalBytes
                for (id, bytes, key) in victims where left > capacity {
                    try deleteRows(id)
                    onChange(.key(key))
                    left -= bytes
                }
                return left
            }
            totalBytes = left
        } catch {
            logger.warning("cache eviction failed: \(error)")
        }
    }

    /// Entries another connection to the file hid for their readers (a purge that spared them):
    /// freed when their last reader ends.
    func doom(_ entries: [Int64]) {
        for entry in entries where readers[entry] != nil { doomed.insert(entry) }
    }

    /// A hit starts reading `entry`'s chunks: its rows stay until the lease ends. The first
    /// reader lists the entry in the file, for a purge from another process to spare it.
    func lease(_ entry: Int64) -> CacheReadLease {
        if readers[entry] == nil { publishReading(entry, true) }
        readers[entry, default: 0] += 1
        return CacheReadLease(store: self, entry: entry)
    }

    /// Lists `entry` in the file's `reading` table, or takes it out. Not listed (a full disk)
    /// only means a purge from another process does not spare it.
    private func publishReading(_ entry: Int64, _ reading: Bool) {
        let statement = reading ? listReading : unlistReading
        do {
            try statement.bind(entry, at: 1)
            if reading { try statement.bind(Int64(getpid()), at: 2) }
            try statement.step()
        } catch {
            logger.debug("cache reading list: \(error)")
        }
        statement.reset()
    }

    /// A hit stopped reading `entry` (its lease ended): the last reader of a removed entry
    /// takes its rows with it.
    func endReading(_ entry: Int64) {
        guard let count = readers[entry] else { return }
        guard count == 1 else {
            readers[entry] = count - 1
            return
        }
        readers[entry] = nil
        publishReading(entry, false)
        // Removed here (doomed), or hidden by another process's purge (complete=2).
        let removedHere = doomed.remove(entry) != nil
        do {
            // Still hidden? (A removal whose transaction rolled back, a full disk, left it
            // visible and counted: it stays.)
            let state = entryState
            defer { state.reset() }
            try state.bind(entry, at: 1)
            guard try state.step() else { return }
            let complete = state.int64(at: 0)
            state.reset()
            guard removedHere ? complete != 1 : complete == 2 else { return }
            // (Inside another's transaction, a part of it.)
            if database.inTransaction {
                try deleteRows(entry)
            } else {
                try database.transaction { try deleteRows(entry) }
            }
        } catch {
            logger.warning("cache removal failed: \(error) (the next start clears it)")
        }
    }
}

/// A hit's hold on the rows of the entry it reads chunk by chunk: while it lives, removing the
/// entry only hides it (``CacheStore/deleteRows(_:)``). Ends when the hit's cursor goes.
final class CacheReadLease {
    private weak var store: CacheStore?
    private let entry: Int64

    init(store: CacheStore, entry: Int64) {
        self.store = store
        self.entry = entry
    }

    deinit { store?.endReading(entry) }
}
