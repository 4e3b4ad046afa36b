import EventIO
import Logging
import SQLite

/// Changes another connection made to the file (the CLI's purge, one applied from another
/// instance's announcement): noticed at most once a millisecond, and taken in.
extension CacheStore {
    /// Notices a commit by another process (the CLI) since the last look: what is kept in memory
    /// is then forgotten and the byte count read again.
    func noticeChangesElsewhere() { if changedElsewhere() { externalChange() } }

    /// Whether another process committed to the file since the last look. Looked at
    /// most once a millisecond: the query takes and drops a shared lock (two `fcntl`s), a cost a
    /// hit should not pay each time, and a purge is seen well before its command has exited.
    private func changedElsewhere() -> Bool {
        let now = EventLoop.monotonicNanoseconds()
        guard now - lastVersionCheck >= 1_000_000 else { return false }
        lastVersionCheck = now
        defer { dataVersion.reset() }
        guard (try? dataVersion.step()) == true else { return true }
        let version = dataVersion.int64(at: 0)
        guard version != lastDataVersion else { return false }
        lastDataVersion = version
        return true
    }

    /// Another process (a purge) changed the file: memory forgets, the byte count is read again,
    /// and what a purge hid for hits (complete=2) goes now, or with the last hit reading it
    /// (a hit that ended before the purge hid it would otherwise leave it until the next start).
    private func externalChange() {
        onChange(.everything)
        if let sum = try? database.prepare(
            "SELECT COALESCE(SUM(footprint), 0) FROM entries WHERE complete=1"),
            (try? sum.step()) == true
        {
            totalBytes = sum.int64(at: 0)
        }
        guard let hidden = try? database.prepare("SELECT id FROM entries WHERE complete=2") else { return }
        var unread: [Int64] = []
        while (try? hidden.step()) == true {
            let entry = hidden.int64(at: 0)
            if readers[entry] != nil { doomed.insert(entry) } else { unread.append(entry) }
        }
        guard !unread.isEmpty else { return }
        do {
            try database.transaction { for entry in unread { try deleteRows(entry) } }
        } catch {
            logger.warning("cache removal failed: \(error) (the next start clears it)")
        }
    }

    /// A key listed as held whose entries are gone (another connection's purge): forgotten, so
    /// that its next lookup asks the shared tier instead of the file.
    func forgetKey(_ key: String) { keys.remove(CacheStore.hash(key)) }
}
