import EventIO
import Logging
import SQLite

/// The cache's bookkeeping, written in batches rather than per request: hit counts and last
/// access of entries (LRU), the hit and miss counters (`sluice cache stats`) and the last storing
/// decision per URL (`sluice cache why`). Loop-confined, like its ``CacheStore``.
final class CacheLedger {
    private let database: Database
    private let logger: Logger
    private let touchEntry: Statement
    private let upsertDecision: Statement
    private var pendingTouches: [Int64: (count: Int64, time: Double)] = [:]
    private var pendingDecisions: [String: Decision] = [:]
    /// The last decision recorded, not yet in ``pendingDecisions``: a URL decided again and
    /// again (a polled endpoint, a busy pass-through) replaces it without hashing the URL.
    private var lastDecision: (url: String, decision: Decision)?
    private typealias Decision = (time: Double, stored: Bool, reason: String?)
    private var pendingHits = 0
    private var pendingMisses = 0
    /// Rows in `decisions`, at most (upserts of known URLs are counted as new).
    private var decisionRows = 0
    /// Most rows kept in `decisions` (``CacheStore/decisionLimit(capacity:)``).
    private let decisionLimit: Int
    private var lastTouchFlush: UInt64 = 0
    static let touchInterval: UInt64 = 10

    init(database: Database, decisionLimit: Int, logger: Logger) throws {
        self.database = database
        self.decisionLimit = decisionLimit
        self.logger = logger
        touchEntry = try database.prepare("UPDATE entries SET hits=hits+?3, last_access=?2 WHERE id=?1")
        upsertDecision = try database.prepare(
            "INSERT INTO decisions(url, time, stored, reason) VALUES(?1,?2,?3,?4) ON CONFLICT(url) DO UPDATE SET time=?2, stored=?3, reason=?4"
        )
        let rows = try database.prepare("SELECT count(*) FROM decisions")
        if try rows.step() { decisionRows = Int(rows.int64(at: 0)) }
    }

    /// Counts a hit (written with the next batch).
    func touch(_ entry: Int64, now: Double) {
        // Changed in place: one lookup of the entry, not one to read and one to write.
        Self.count(&pendingTouches[entry, default: (0, now)], now: now)
        pendingHits += 1
    }

    private static func count(_ touches: inout (count: Int64, time: Double), now: Double) {
        touches.count += 1
        touches.time = now
    }

    /// Counts a lookup that went upstream (written with the hits, for `sluice cache stats`' hit ratio).
    func countMiss() { pendingMisses += 1 }

    /// Writes the batched hits and decisions in one transaction (called ten times a second).
    /// Hits (`hits`, `last_access`, for LRU) go every ``touchInterval`` seconds: on a large
    /// cache they are scattered row updates that dirty most pages of the table, and writing them
    /// each second made checkpoints stall hits. Decisions (`sluice cache why`) go each time.
    func flush(force: Bool = false) {
        if let last = lastDecision.take() { pendingDecisions[last.url] = last.decision }
        let now = EventLoop.monotonicNanoseconds()
        let touchesDue =
            force || pendingTouches.count > 100_000 || now - lastTouchFlush >= CacheLedger.touchInterval * 1_000_000_000
        let countersDue = touchesDue && (pendingHits > 0 || pendingMisses > 0)
        guard (touchesDue && !pendingTouches.isEmpty) || countersDue || !pendingDecisions.isEmpty else { return }
        let touches = touchesDue ? pendingTouches : [:]
        let decisions = pendingDecisions
        let (hits, misses) = countersDue ? (pendingHits, pendingMisses) : (0, 0)
        if touchesDue {
            pendingTouches = [:]
            lastTouchFlush = now
            pendingHits = 0
            pendingMisses = 0
        }
        pendingDecisions = [:]
        do {
            try database.transaction {
                for (entry, touch) in touches {
                    defer { touchEntry.reset() }
                    try touchEntry.bind(entry, at: 1)
                    try touchEntry.bind(touch.time, at: 2)
                    try touchEntry.bind(touch.count, at: 3)
                    try touchEntry.step()
                }
                if hits > 0 || misses > 0 {
                    try database.execute(
                        "INSERT INTO counters(name, value) VALUES('hits', \(hits)), ('misses', \(misses)) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value"
                    )
                }
                for (url, decision) in decisions {
                    defer { upsertDecision.reset() }
                    try upsertDecision.bind(url, at: 1)
                    try upsertDecision.bind(decision.time, at: 2)
                    try upsertDecision.bind(Int64(decision.stored ? 1 : 0), at: 3)
                    if let reason = decision.reason { try upsertDecision.bind(reason, at: 4) }
                    try upsertDecision.step()
                }
                decisionRows += decisions.count
                if decisionRows > decisionLimit + decisionLimit / 10 {
                    // Unique pass-through URLs must not grow the file without end: keep the newest.
                    try database.execute(
                        "DELETE FROM decisions WHERE time < (SELECT time FROM decisions ORDER BY time DESC LIMIT 1 OFFSET \(decisionLimit))"
                    )
                    let rows = try database.prepare("SELECT count(*) FROM decisions")
                    if try rows.step() { decisionRows = Int(rows.int64(at: 0)) }
                }
            }
        } catch {
            logger.warning("cache bookkeeping not written: \(error)")
        }
    }

    /// Records the last storing decision for a URL (`sluice cache why`); written with the next batch.
    func record(url: String, now: Double, stored: Bool, reason: String?) {
        if let last = lastDecision, last.url != url { pendingDecisions[last.url] = last.decision }
        lastDecision = (url, (now, stored, reason))
        // More than 10 000 waiting, the last one counted.
        if pendingDecisions.count >= 10_000 { flush() }
    }
}
