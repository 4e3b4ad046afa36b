import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Purges: what to remove, and removing it (sparing what a running proxy's hits still read).
extension CacheInspector {
    /// What to purge.
    public enum Selector: Sendable {
        case all
        case host(String)
        /// A glob over the whole URL.
        case urlGlob(String)
        /// One URL (every variant) or one entry number.
        case keyOrURL(String)
    }

    /// The URL keys a `keyOrURL` purge names (what the shared tier is told), read before it runs.
    public static func keys(of selector: Selector, in inspector: CacheInspector, now: Double) -> [String] {
        guard case .keyOrURL(let value) = selector else { return [] }
        let stored = (try? inspector.entries(for: value, now: now))?.map(\.key) ?? []
        return stored + (Int64(value) == nil ? [value] : [])
    }

    /// Removes the selected entries, every variant, with their bodies, from another process
    /// than the proxy's (the CLI). What a running proxy's hits are reading (the file's `reading`
    /// list) is only hidden: that proxy frees it when they end. Returns what went and how many
    /// were hidden.
    public func purge(_ selector: Selector) throws -> (entries: Int, bytes: Int64, hidden: Int) {
        let result = try purge(selector, sparing: nil)
        return (result.entries, result.bytes, result.hidden.count)
    }

    /// The entries a running proxy's hits are reading, as it listed them in the file (a row of a
    /// process that is gone is left out: a crashed proxy's list is cleared when it starts again).
    func readByRunningProxies() -> Set<Int64> {
        // (No such table: no proxy of this version ever ran on the file.)
        guard let rows = try? database.prepare("SELECT entry, pid FROM reading") else { return [] }
        var entries: Set<Int64> = []
        while (try? rows.step()) == true {
            let pid = pid_t(truncatingIfNeeded: rows.int64(at: 1))
            if pid > 0, kill(pid, 0) == 0 || errno == EPERM { entries.insert(rows.int64(at: 0)) }
        }
        return entries
    }

    /// The same, but entries in `sparing` (those a running proxy's hits are reading) are only
    /// hidden (complete=2: no lookup finds them): their rows are the reader's to free.
    /// Also returns which of them it hid.
    /// `sparing` `nil`: what running proxies list as read, read inside the purge's transaction
    /// (a proxy lists and unlists only between transactions, so the two cannot cross).
    func purge(_ selector: Selector, sparing: Set<Int64>?) throws -> (entries: Int, bytes: Int64, hidden: [Int64]) {
        let condition: String
        var text: String?
        var id: Int64?
        switch selector {
        case .all: condition = "1"
        case .host(let host):
            condition = "host=?1"
            text = host.lowercased()
        case .urlGlob(let glob):
            condition = "url GLOB ?1"
            text = glob
        case .keyOrURL(let value):
            if let number = Int64(value) {
                // An entry number purges its URL, every variant.
                condition = "key=(SELECT key FROM entries WHERE id=?1)"
                id = number
            } else {
                condition = "(key=?1 OR url=?1)"
                text = value
            }
        }
        let all: Bool
        if case .all = selector { all = true } else { all = false }
        return try purge(condition: condition, all: all, text: text, id: id, sparing: sparing)
    }

    private func purge(condition: String, all: Bool, text: String?, id: Int64?, sparing given: Set<Int64>?) throws -> (
        entries: Int, bytes: Int64, hidden: [Int64]
    ) {
        try database.transaction {
            let sparing = given ?? readByRunningProxies()
            let measure = try database.prepare(
                "SELECT count(*), COALESCE(sum(size), 0) FROM entries WHERE complete=1 AND \(condition)")
            // (Row numbers, written in the statement: nothing from outside.)
            let spared = sparing.isEmpty ? "0" : "id IN (\(sparing.map(String.init).joined(separator: ",")))"
            let hide = try database.prepare(
                "UPDATE entries SET complete=2 WHERE complete=1 AND \(spared) AND \(condition) RETURNING id")
            // Everything and nothing spared: DELETE without a WHERE clause drops the tables' pages
            // at once (SQLite's truncate optimisation) instead of row by row.
            let truncates = all && sparing.isEmpty
            let chunks = try database.prepare(
                truncates
                    ? "DELETE FROM chunks"
                    : "DELETE FROM chunks WHERE entry IN (SELECT id FROM entries WHERE NOT \(spared) AND \(condition))")
            let rows = try database.prepare(
                truncates ? "DELETE FROM entries" : "DELETE FROM entries WHERE NOT \(spared) AND \(condition)")
            for statement in [measure, hide, chunks, rows] {
                if let text { try statement.bind(text, at: 1) }
                if let id { try statement.bind(id, at: 1) }
            }
            _ = try measure.step()
            let counted = (Int(measure.int64(at: 0)), measure.int64(at: 1))
            var hidden: [Int64] = []
            while try hide.step() { hidden.append(hide.int64(at: 0)) }
            _ = try chunks.step()
            _ = try rows.step()
            return (counted.0, counted.1, hidden)
        }
    }
}
