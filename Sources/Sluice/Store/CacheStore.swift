import EventIO
import Logging
import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The response cache in one SQLite file (WAL): one row per stored response, its body in ordered
/// chunks written as the response streams. An entry is visible only once it is marked complete,
/// so an aborted transfer or a crash leaves nothing that could be served. Loop-confined.
final class CacheStore {
    let database: Database
    let capacity: Int64
    let settings: Configuration.Cache
    let logger: Logger
    /// Told of every change to what is stored (the memory tier forgets what changed).
    var onChange: (Change) -> Void = { _ in }
    let dataVersion: Statement
    var lastDataVersion: Int64 = 0
    var lastVersionCheck: UInt64 = 0
    /// Bytes the complete entries take in the file, bodies and heads (``footprint``): what
    /// `cache.capacity` bounds. Kept in memory; the file is the truth at start.
    var totalBytes: Int64 = 0
    /// Keys with at least one complete entry: a URL not in here is a miss without a query.
    /// (Only this process writes the file; a key here whose rows another process purged is just a miss.)
    /// Held as 32-bit hashes (about 8 bytes a key, not the URL: 8 MiB for a million entries). A
    /// collision only costs a query, and removing a colliding key's hash costs the other key one
    /// spurious miss (it is stored again).
    var keys: Set<UInt32> = []
    /// Entries a hit is reading chunk by chunk, and how many such hits each has (``lease(_:)``).
    var readers: [Int64: Int] = [:]
    /// Removed entries whose rows wait for their last reader: hidden from lookups now, gone
    /// when it ends (or at the next start, after a crash).
    var doomed: Set<Int64> = []
    /// Hits, misses and storing decisions, written in batches (``flushPending(force:)``).
    private let ledger: CacheLedger
    private let selectCandidates: Statement
    private let selectChunk: Statement
    private let insertEntry: Statement
    private let nextEntryID: Statement
    let insertChunk: Statement
    /// Lists and unlists an entry a hit reads chunk by chunk (``lease(_:)``).
    let listReading: Statement
    let unlistReading: Statement
    /// An entry's `complete` (1 whole, 0 being written or removed here, 2 hidden by a purge elsewhere).
    let entryState: Statement

    /// Opens (or creates) the cache; a corrupt or too-new file is moved aside and an empty cache starts.
    init(settings: Configuration.Cache, logger: Logger) throws {
        let path = settings.path
        self.settings = settings
        capacity = settings.capacity
        self.logger = logger
        CacheStore.makeParentDirectory(of: path)
        var opened: Database?
        do {
            let candidate = try Database(path: path)
            guard try candidate.quickCheck() else { throw CacheStoreError.corrupt }
            guard candidate.userVersion <= CacheStore.schemaVersion else {
                throw CacheStoreError.tooNew(candidate.userVersion)
            }
            opened = candidate
        } catch {
            let aside = path + ".aside-\(time(nil))"
            logger.error("cache file \(path) unusable (\(error)); moved to \(aside), starting an empty cache")
            rename(path, aside)
            unlink(path + "-wal")
            unlink(path + "-shm")
        }
        let database: Database
        if let opened { database = opened } else { database = try Database(path: path) }
        self.database = database
        if case .tooNew(let version, _) = try CacheStore.migrator.migrate(database) {
            throw CacheStoreError.tooNew(version)
        }
        // Leftovers of a crash mid-store, and entries a purge hid for hits that have ended, are
        // never visible; drop them. So is the list of what the last run's hits were reading.
        // The list of entries hits read chunk by chunk (another process's purge spares them) is
        // no migration: a file it is in still opens with an earlier Sluice (which ignores it).
        try database.execute(
            "CREATE TABLE IF NOT EXISTS reading(entry INTEGER PRIMARY KEY, pid INTEGER NOT NULL); DELETE FROM chunks WHERE entry IN (SELECT id FROM entries WHERE complete<>1); DELETE FROM entries WHERE complete<>1; DELETE FROM reading"
        )
        listReading = try database.prepare("INSERT OR REPLACE INTO reading(entry, pid) VALUES(?1, ?2)")
        unlistReading = try database.prepare("DELETE FROM reading WHERE entry=?1")
        entryState = try database.prepare("SELECT complete FROM entries WHERE id=?1")
        selectCandidates = try database.prepare(
            "SELECT id, variant, vary, status, reason, headers, request_time, response_time, size, ttl FROM entries WHERE key=?1 AND complete=1 ORDER BY response_time DESC, id DESC"
        )
        selectChunk = try database.prepare("SELECT data FROM chunks WHERE entry=?1 AND seq=?2")
        // An entry's id is never given twice, whatever was removed: a purge (this process's, or
        // `sluice cache purge` from another) can remove an entry still being written, and that
        // writer goes on writing chunks under its id until it finds its row gone; SQLite gives a
        // new row the largest id plus one, so a new entry could take the id and those chunks.
        nextEntryID = try database.prepare(
            """
            INSERT INTO counters(name, value) VALUES('entry-ids', (SELECT COALESCE(MAX(id), 0) FROM entries) + 1)
            ON CONFLICT(name) DO UPDATE SET value = MAX(value, (SELECT COALESCE(MAX(id), 0) FROM entries)) + 1
            RETURNING value
            """)
        insertEntry = try database.prepare(
            "INSERT INTO entries(key, variant, vary, method, url, host, status, reason, headers, request_time, response_time, etag, last_modified, last_access, rule, id) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?11,?14,?15)"
        )
        insertChunk = try database.prepare("INSERT INTO chunks(entry, seq, data) VALUES(?1,?2,?3)")
        ledger = try CacheLedger(
            database: database, decisionLimit: CacheStore.decisionLimit(capacity: settings.capacity), logger: logger)
        // 4 MiB of page cache (SQLite's default is 2 MiB): more of the key index of a large cache
        // stays in memory instead of being read again with pread.
        try database.execute("PRAGMA cache_size=-4096")
        // The write-ahead log is cut back to 4 MiB after each checkpoint: it otherwise keeps the
        // largest size it ever reached, beside the capacity.
        try database.execute("PRAGMA journal_size_limit=4194304")
        dataVersion = try database.prepare("PRAGMA data_version")
        if try dataVersion.step() { lastDataVersion = dataVersion.int64(at: 0) }
        dataVersion.reset()
        let sum = try database.prepare("SELECT COALESCE(SUM(footprint), 0) FROM entries WHERE complete=1")
        if try sum.step() { totalBytes = sum.int64(at: 0) }
        let allKeys = try database.prepare("SELECT DISTINCT key FROM entries WHERE complete=1")
        while try allKeys.step() { if let key = allKeys.text(at: 0) { keys.insert(CacheStore.hash(key)) } }
    }

    // MARK: - Reading

    /// Whether a key has a complete entry (it is known to be cacheable).
    func hasEntries(_ key: String) -> Bool { keys.contains(CacheStore.hash(key)) }

    /// FNV-1a, 64 bits folded to 32, of a key's bytes (stable, unlike `Hasher`, and allocation-free).
    static func hash(_ key: String) -> UInt32 {
        // Over the string's own storage when it is contiguous (a native key always is): the
        // `utf8` view's iterator costs about 25 instructions a byte.
        func fold(_ bytes: some Sequence<UInt8>) -> UInt32 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
        }
        return key.utf8.withContiguousStorageIfAvailable { fold($0) } ?? fold(key.utf8)
    }

    /// Complete entries for a key, newest first, read from the file.
    func candidates(key: String) -> [Entry] {
        guard keys.contains(CacheStore.hash(key)) else { return [] }
        defer { selectCandidates.reset() }
        var entries: [Entry] = []
        do {
            try selectCandidates.bind(key, at: 1)
            while try selectCandidates.step() {
                let vary = selectCandidates.text(at: 2) ?? ""
                let headers = CacheStore.decode(selectCandidates.text(at: 5) ?? "")
                entries.append(
                    Entry(
                        key: key, ref: EntryRef(row: selectCandidates.int64(at: 0)),
                        variant: selectCandidates.text(at: 1) ?? "",
                        varyNames: vary.isEmpty ? [] : vary.split(separator: ",").map(String.init),
                        status: Int(selectCandidates.int64(at: 3)), reason: selectCandidates.text(at: 4) ?? "",
                        headers: headers,
                        requestTime: selectCandidates.double(at: 6), responseTime: selectCandidates.double(at: 7),
                        size: selectCandidates.int64(at: 8),
                        ttl: selectCandidates.isNull(at: 9) ? nil : selectCandidates.int64(at: 9),
                        facts: facts(headers)))
            }
        } catch {
            logger.warning("cache lookup failed: \(error)")
            return []
        }
        return entries
    }

    func facts(_ headers: HTTPFields) -> Facts {
        Facts(headers, shared: settings.shared, heuristic: settings.heuristic)
    }

    /// A stored body read whole (for the memory tier); `nil` when it could not be read whole.
    func wholeBody(_ entry: Entry) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(entry.size))
        var seq: Int64 = 0
        while let chunk = chunk(entry: entry.ref.row, seq: seq) {
            bytes.append(contentsOf: chunk)
            seq += 1
        }
        return bytes.count == entry.size ? bytes : nil
    }

    /// Body chunk `seq` of an entry (`nil` past the end or on error).
    func chunk(entry: Int64, seq: Int64) -> [UInt8]? {
        defer { selectChunk.reset() }
        do {
            try selectChunk.bind(entry, at: 1)
            try selectChunk.bind(seq, at: 2)
            guard try selectChunk.step() else { return nil }
            return selectChunk.blob(at: 0)
        } catch {
            logger.warning("cache read failed: \(error)")
            return nil
        }
    }

    /// Counts a hit (written with the next batch).
    func touch(_ entry: Int64, now: Double) { ledger.touch(entry, now: now) }

    /// Counts a lookup that went upstream.
    func countMiss() { ledger.countMiss() }

    /// Records the last storing decision for a URL (`sluice cache why`).
    func recordDecision(url: String, now: Double, stored: Bool, reason: String?) {
        ledger.record(url: CacheStore.decisionKey(CacheStore.urlKey(url)), now: now, stored: stored, reason: reason)
    }

    /// Writes the batched bookkeeping (ten times a second, and forced at shutdown).
    func flushPending(force: Bool = false) { ledger.flush(force: force) }

    // MARK: - Writing

    /// A response about to be written: where it goes and what limits it.
    struct NewEntry {
        /// The head as stored (hop-by-hop fields removed), its key and times.
        var stored: StoredHead
        var method: String
        var url: TargetURL
        /// The rule's name when a rule matched.
        var rule: String?
        /// Largest body stored.
        var limit: Int64
        /// `Content-Length` of the origin's response, when it framed the body that way.
        var expectedLength: Int64?
        /// The header fields as received (what the will-cache hook is shown).
        var proposedHeaders: HTTPFields
    }

    /// Starts an invisible entry; `nil` if the database refused (the response is still delivered).
    /// `flushFirst`: write the batched bookkeeping first (`false` inside a transaction: the
    /// ledger opens its own).
    func begin(_ new: NewEntry, flushFirst: Bool = true) -> Int64? {
        defer { insertEntry.reset() }
        if flushFirst { flushPending() }  // decisions first: the entry's own writes follow
        do {
            let stored = new.stored
            try insertEntry.bind(stored.key, at: 1)
            try insertEntry.bind(stored.variant, at: 2)
            try insertEntry.bind(stored.varyNames.joined(separator: ","), at: 3)
            try insertEntry.bind(new.method, at: 4)
            try insertEntry.bind(new.url.description, at: 5)
            try insertEntry.bind(new.url.host, at: 6)
            try insertEntry.bind(Int64(stored.status), at: 7)
            try insertEntry.bind(stored.reason, at: 8)
            try insertEntry.bind(CacheStore.encode(stored.headers), at: 9)
            try insertEntry.bind(stored.requestTime, at: 10)
            try insertEntry.bind(stored.responseTime, at: 11)
            if let etag = stored.headers[.etag] { try insertEntry.bind(etag, at: 12) }
            if let modified = stored.headers[.lastModified] { try insertEntry.bind(modified, at: 13) }
            if let rule = new.rule { try insertEntry.bind(rule, at: 14) }
            defer { nextEntryID.reset() }
            guard try nextEntryID.step() else { return nil }
            let id = nextEntryID.int64(at: 0)
            try insertEntry.bind(id, at: 15)
            try insertEntry.step()
            return id
        } catch {
            warnSkipped(error)
            return nil
        }
    }

    /// When a store was last reported, and how many failed since (a full disk fails every
    /// store: one line a minute says so, with the count, instead of one per response).
    private var skipReport = (at: UInt64(0), suppressed: 0)

    /// The last store failed (a full disk, the file's size limit), and none succeeded since:
    /// `/health` says the cache is not storing.
    private(set) var failsStores = false

    func warnSkipped(_ error: any Error) {
        failsStores = true
        let now = EventLoop.monotonicNanoseconds()
        guard skipReport.at == 0 || now - skipReport.at >= 60_000_000_000 else {
            skipReport.suppressed += 1
            return
        }
        let more = skipReport.suppressed > 0 ? " (\(skipReport.suppressed) more skipped since the last report)" : ""
        logger.warning("cache store skipped: \(error)\(more); responses are still delivered")
        skipReport = (now, 0)
    }

    /// Appends a body chunk; `false` if the database refused (the entry is then discarded).
    func append(entry: Int64, seq: Int64, data: [UInt8]) -> Bool {
        defer { insertChunk.reset() }
        do {
            try insertChunk.bind(entry, at: 1)
            try insertChunk.bind(seq, at: 2)
            try insertChunk.bind(data, at: 3)
            try insertChunk.step()
            return true
        } catch {
            warnSkipped(error)
            discard(entry)
            return false
        }
    }

    /// Makes a finished entry visible, replacing older ones of the same key and variant; then evicts.
    /// `headers` replaces the stored header fields (the will-cache hook changed them); `ttl` is its lifetime.
    func commit(
        entry: Int64, key: String, variant: String, size: Int64, headers: HTTPFields? = nil, ttl: Int64? = nil,
        contract: String? = nil
    ) {
        if key.hasSuffix(CacheStore.piecesSuffix) {
            return commitPiece(entry: entry, key: key, variant: variant, size: size, headers: headers, ttl: ttl)
        }
        do {
            totalBytes += try database.transaction {
                let removed = try replaceComplete(key: key, variant: variant)
                noteStored(key: key)
                let mark = try database.prepare(
                    "UPDATE entries SET complete=1, size=?2, ttl=?3, headers=COALESCE(?4, headers), contract=?5 WHERE id=?1 AND complete=0"
                )
                try mark.bind(entry, at: 1)
                try mark.bind(size, at: 2)
                if let ttl { try mark.bind(ttl, at: 3) }
                if let headers { try mark.bind(CacheStore.encode(headers), at: 4) }
                if let contract { try mark.bind(contract, at: 5) }
                try mark.step()
                // Purged (or hidden) while it was written: nothing is stored, and what it replaced stays.
                guard database.changes > 0 else { throw CacheStoreError.entryGone }
                return try footprint(of: entry) - removed
            }
        } catch {
            if case CacheStoreError.entryGone = error {
                onChange(.key(key))
            } else {
                warnSkipped(error)
            }
            discard(entry)
            return
        }
        failsStores = false
        evictIfNeeded()
    }

    /// Settles what a row takes in the file (``footprint``) once it is complete, in its column.
    func footprint(of entry: Int64) throws(SQLiteError) -> Int64 {
        let update = try database.prepare(
            "UPDATE entries SET footprint = \(CacheStore.footprint) WHERE id=?1 RETURNING footprint")
        try update.bind(entry, at: 1)
        guard try update.step() else { return 0 }
        let bytes = update.int64(at: 0)
        while try update.step() {}
        return bytes
    }

    /// A key has a new complete entry: known to be cacheable, and memory forgets its old ones.
    func noteStored(key: String) {
        keys.insert(CacheStore.hash(key))
        onChange(.key(key))
    }

    /// Stores a head refreshed by a 304 (§4.3.4): new fields and times, same body.
    func refresh(_ entry: Entry) {
        onChange(.key(entry.key))
        do {
            let update = try database.prepare(
                "UPDATE entries SET headers=?2, request_time=?3, response_time=?4, etag=?5, last_modified=?6, ttl=?7 WHERE id=?1"
            )
            try update.bind(entry.ref.row, at: 1)
            try update.bind(CacheStore.encode(entry.headers), at: 2)
            try update.bind(entry.requestTime, at: 3)
            try update.bind(entry.responseTime, at: 4)
            if let etag = entry.headers[.etag] { try update.bind(etag, at: 5) }
            if let modified = entry.headers[.lastModified] { try update.bind(modified, at: 6) }
            if let ttl = entry.ttl { try update.bind(ttl, at: 7) }
            try update.step()
        } catch {
            logger.warning("cache refresh failed: \(error)")
        }
    }
}
