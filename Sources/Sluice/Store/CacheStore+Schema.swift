import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The cache file's shape: the schema and its ordered migrations, the stored entry as the
/// proxy reads it, and the header-field text format.
extension CacheStore {
    /// The cache file's migrations, in order (`PRAGMA user_version` counts those applied).
    static let migrator = Migrator([
        Migrator.Migration(
            "entries, chunks and storing decisions",
            sql: """
                CREATE TABLE entries(
                  id INTEGER PRIMARY KEY,
                  key TEXT NOT NULL,
                  variant TEXT NOT NULL,
                  vary TEXT NOT NULL,
                  method TEXT NOT NULL,
                  url TEXT NOT NULL,
                  host TEXT NOT NULL,
                  status INTEGER NOT NULL,
                  reason TEXT NOT NULL,
                  headers TEXT NOT NULL,
                  request_time REAL NOT NULL,
                  response_time REAL NOT NULL,
                  etag TEXT,
                  last_modified TEXT,
                  size INTEGER NOT NULL DEFAULT 0,
                  hits INTEGER NOT NULL DEFAULT 0,
                  last_access REAL NOT NULL,
                  rule TEXT,
                  complete INTEGER NOT NULL DEFAULT 0);
                CREATE INDEX entries_key ON entries(key, complete);
                CREATE INDEX entries_access ON entries(last_access);
                CREATE TABLE chunks(
                  entry INTEGER NOT NULL,
                  seq INTEGER NOT NULL,
                  data BLOB NOT NULL,
                  PRIMARY KEY(entry, seq)) WITHOUT ROWID;
                CREATE TABLE decisions(
                  url TEXT PRIMARY KEY,
                  time REAL NOT NULL,
                  stored INTEGER NOT NULL,
                  reason TEXT) WITHOUT ROWID;
                """),
        Migrator.Migration(
            "a rule's lifetime per entry (entries.ttl)", sql: "ALTER TABLE entries ADD COLUMN ttl INTEGER"),
        Migrator.Migration("storing decisions by time", sql: "CREATE INDEX decisions_time ON decisions(time)"),
        Migrator.Migration(
            "counters kept across restarts",
            sql: "CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID"),
        Migrator.Migration(
            "the contract verdict a response was served with (entries.contract)",
            sql: "ALTER TABLE entries ADD COLUMN contract TEXT"),
        // A WITHOUT ROWID table keeps at most about 1,000 bytes of a row in its B-tree page and
        // the rest in overflow pages of 4 KiB: a 1 KB body took 5 KB of the file. A rowid table
        // keeps a row of up to 4 KB in its page. Bodies up to 256 MiB in all are copied; a larger
        // cache starts empty (copying would double the file and its log while it starts).
        Migrator.Migration(
            "body chunks in a rowid table (small bodies share pages); what an entry takes (entries.footprint)",
            sql: """
                CREATE TABLE chunks_rowid(
                  entry INTEGER NOT NULL,
                  seq INTEGER NOT NULL,
                  data BLOB NOT NULL,
                  PRIMARY KEY(entry, seq));
                CREATE TEMP TABLE chunk_bytes AS SELECT COALESCE(SUM(length(data)), 0) AS total FROM chunks;
                INSERT INTO chunks_rowid(entry, seq, data) SELECT entry, seq, data FROM chunks
                  WHERE (SELECT total FROM chunk_bytes) <= 268435456 ORDER BY entry, seq;
                DELETE FROM entries WHERE (SELECT total FROM chunk_bytes) > 268435456;
                DROP TABLE chunks;
                ALTER TABLE chunks_rowid RENAME TO chunks;
                DROP TABLE chunk_bytes;
                ALTER TABLE entries ADD COLUMN footprint INTEGER NOT NULL DEFAULT 0;
                UPDATE entries SET footprint = \(CacheStore.footprint) WHERE complete=1;
                """),
    ])
    /// The version a file this code writes has.
    static var schemaVersion: Int { migrator.migrations.count }

    /// Most storing decisions kept (one per URL, the newest); older ones are dropped. Kept
    /// within about a tenth of the capacity: one for each 16 KiB of it (a decision with its
    /// index takes up to about 1.6 KB), at least 100 and at most 100,000.
    static func decisionLimit(capacity: Int64) -> Int { Int(min(100_000, max(100, capacity / 16_384))) }

    /// The longest URL a storing decision is kept under as it is: a longer one is kept under its
    /// first bytes and a hash of the whole (``decisionKey(_:)``). Short enough that the key and
    /// its index entries stay within their B-tree pages (SQLite moves the rest of a key over
    /// about 1,000 bytes to overflow pages of 4 KiB each).
    static let decisionKeyLimit = 512

    /// What a URL's storing decision is kept under (the writer and `sluice cache why` agree on it).
    static func decisionKey(_ url: String) -> String {
        guard url.utf8.count > decisionKeyLimit else { return url }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let hex = String(hash, radix: 16)
        let head = String(decoding: url.utf8.prefix(decisionKeyLimit - 24), as: UTF8.self)
        return head + " #" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// What a complete entry takes in the file, as counted against `cache.capacity` (an SQL
    /// expression over an `entries` row, kept in its `footprint` column when it is committed:
    /// what is added at the commit is what its removal takes away): its body (and its chunks' rows), and its share of the pages that hold its row
    /// (head, URL, key and the rest) and its key's index entry. A page of 4 KiB holds as many
    /// rows as fit whole, so a row of 2.1 KB takes a page of its own; a row over one page, and
    /// the part of a key over about 1,000 bytes, go to 4 KiB overflow pages; index pages are
    /// filled to about three quarters (keys arrive in no order).
    static let footprint = """
        (size + 64 * ((size + \(CacheWriter.chunkSize - 1)) / \(CacheWriter.chunkSize)) + 32 \
        + CASE WHEN \(rowPayload) <= 3992 THEN 4096 / (4000 / (\(rowPayload) + 8)) \
        ELSE 4096 * ((\(rowPayload) + 4091) / 4092) END \
        + CASE WHEN length(CAST(key AS BLOB)) <= 990 THEN 5461 / (4084 / (length(CAST(key AS BLOB)) + 16)) \
        ELSE 1365 + 4096 * ((length(CAST(key AS BLOB)) - 990 + 4091) / 4092) END)
        """

    /// The bytes of an `entries` row, about.
    private static let rowPayload = """
        (64 + length(CAST(key AS BLOB)) + length(CAST(url AS BLOB)) + length(CAST(headers AS BLOB)) \
        + length(CAST(variant AS BLOB)) + length(CAST(vary AS BLOB)) + length(CAST(host AS BLOB)) \
        + length(CAST(reason AS BLOB)) + ifnull(length(CAST(etag AS BLOB)), 0) \
        + ifnull(length(CAST(last_modified AS BLOB)), 0) + ifnull(length(CAST(rule AS BLOB)), 0) \
        + ifnull(length(CAST(contract AS BLOB)), 0))
        """

    /// A stored response, without its body. Immutable and shared by reference: the lookup, the
    /// memory tier, the exchange's phase and its actions all hold the same one.
    final class Entry: KeepsStoredHead {
        /// The head, key and times, as every tier keeps them.
        let stored: StoredHead
        /// Where the body is, for the tier that holds it.
        let ref: EntryRef
        let size: Int64
        /// What the freshness computations need from the header fields, parsed once.
        let facts: Facts
        /// Just copied from the shared tier (the hit says `detail=shared`); only on the entries
        /// handed to the lookup that copied it.
        var fromSharedTier = false

        init(stored: StoredHead, ref: EntryRef, size: Int64, facts: Facts) {
            self.stored = stored
            self.ref = ref
            self.size = size
            self.facts = facts
        }

        convenience init(
            key: String, ref: EntryRef, variant: String, varyNames: [String], status: Int, reason: String,
            headers: HTTPFields, requestTime: Double, responseTime: Double, size: Int64, ttl: Int64?, facts: Facts
        ) {
            self.init(
                stored: StoredHead(
                    key: key, variant: variant, varyNames: varyNames, status: status, reason: reason, headers: headers,
                    requestTime: requestTime, responseTime: responseTime, ttl: ttl),
                ref: ref, size: size, facts: facts)
        }

        /// The same entry with a new head and times (a 304 refreshed it, §4.3.4).
        func refreshed(headers: HTTPFields, facts: Facts, requestTime: Double, responseTime: Double, ttl: Int64?)
            -> Entry
        {
            var head = stored
            (head.headers, head.requestTime, head.responseTime, head.ttl) = (headers, requestTime, responseTime, ttl)
            return Entry(stored: head, ref: ref, size: size, facts: facts)
        }

        /// The entry's current age at `now`.
        func age(at now: Double) -> Int64 {
            facts.currentAge(requestTime: requestTime, responseTime: responseTime, now: now)
        }
    }

    /// The parts of a stored head that freshness and age depend on (RFC 9111 §4.2).
    struct Facts {
        /// `Date`, in seconds since the epoch.
        let date: Double?
        /// `Age`, in seconds.
        let age: Double
        /// The freshness lifetime the header fields give (§4.2.1).
        let lifetime: Int64
        /// The stored `Cache-Control`.
        let control: CacheControl

        /// §4.2.3: the entry's current age at `now`.
        func currentAge(requestTime: Double, responseTime: Double, now: Double) -> Int64 {
            CachePolicy.currentAge(
                date: date, ageValue: age, requestTime: requestTime, responseTime: responseTime, now: now)
        }

        init(_ headers: HTTPFields, shared: Bool, heuristic: CachePolicy.Heuristic) {
            date = headers[.date].flatMap(HTTPDate.parse).map(Double.init)
            age = CachePolicy.ageValue(headers)
            control = CacheControl(headers)
            lifetime = CachePolicy.freshnessLifetime(
                ResponseHead(status: 200, headers: headers), control: control, shared: shared, heuristic: heuristic)
        }
    }

    // MARK: - Header text

    /// One line per field; an opaque value's line (``HTTPFields/Field/opaque``) starts with a
    /// U+0001, a byte no field name has, and holds its characters as UTF-8.
    static func encode(_ headers: HTTPFields) -> String {
        headers.map { ($0.opaque ? "\u{1}" : "") + $0.name + ": " + $0.value + "\r\n" }.joined()
    }

    /// The inverse of ``encode(_:)``, byte by byte.
    static func decode(_ text: String) -> HTTPFields {
        var fields = HTTPFields()
        var copy = text
        copy.withUTF8 { b in
            var lineStart = 0
            let n = b.count
            while lineStart < n {
                var lineEnd = lineStart
                while lineEnd < n, b[lineEnd] != 0x0D, b[lineEnd] != 0x0A { lineEnd += 1 }
                var colon = lineStart
                while colon < lineEnd, b[colon] != 0x3A { colon += 1 }
                let opaque = b[lineStart] == 0x01
                if opaque { lineStart += 1 }
                if colon < lineEnd {
                    var valueStart = colon + 1
                    while valueStart < lineEnd, b[valueStart] == 0x20 || b[valueStart] == 0x09 { valueStart += 1 }
                    var valueEnd = lineEnd
                    while valueEnd > valueStart, b[valueEnd - 1] == 0x20 || b[valueEnd - 1] == 0x09 { valueEnd -= 1 }
                    let name = String(decoding: UnsafeBufferPointer(rebasing: b[lineStart..<colon]), as: UTF8.self)
                    fields.append(
                        name: name,
                        value: String(decoding: UnsafeBufferPointer(rebasing: b[valueStart..<valueEnd]), as: UTF8.self),
                        code: FieldCode(name), opaque: opaque)
                }
                lineStart = lineEnd
                while lineStart < n, b[lineStart] == 0x0D || b[lineStart] == 0x0A { lineStart += 1 }
            }
        }
        return fields
    }
}

extension CacheStore {
    /// Creates the directories above the cache file (`mkdir -p`).
    static func makeParentDirectory(of path: String) {
        guard let slash = path.lastIndex(of: "/") else { return }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path[..<slash].split(separator: "/") {
            prefix += part + "/"
            mkdir(prefix, 0o755)
        }
    }
}

/// Why a cache file was moved aside at start.
enum CacheStoreError: Error, CustomStringConvertible {
    case corrupt
    case tooNew(Int)
    /// The entry being written was removed meanwhile (a purge by another process).
    case entryGone

    var description: String {
        switch self {
        case .corrupt: "quick_check failed"
        case .tooNew(let version): "schema version \(version) is newer than this Sluice understands"
        case .entryGone: "the entry was purged while it was written"
        }
    }
}
