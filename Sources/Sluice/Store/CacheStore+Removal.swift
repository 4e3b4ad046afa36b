import Logging
import SQLite

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

    func deleteRows(_ entry: Int64) throws(SQLiteError) {
        onChange(.entry(EntryRef(row: entry)))
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
}
