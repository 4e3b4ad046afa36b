import SQLite

/// The cache file as people and scripts see it (`sluice cache …`): one query layer, used whether
/// or not `sluice serve` runs. Reading never changes the file (no hit counts, no access times);
/// only ``purge(_:)`` writes, and a running proxy notices it at its next lookup.
public final class CacheInspector {
    /// A stored response, as listed.
    public struct Entry: Sendable {
        public let id: Int64
        public let key: String
        public let url: String
        public let method: String
        public let host: String
        public let status: Int
        public let reason: String
        public let headers: HTTPFields
        /// The Vary'd request header values this variant was stored for (empty without Vary).
        public let variant: String
        public let requestTime: Double
        public let responseTime: Double
        public let size: Int64
        public let hits: Int64
        public let lastAccess: Double
        /// The rule that admitted it (`nil`: the defaults).
        public let rule: String?
        /// A lifetime given by the will-cache hook (`cache.ttl`), in seconds.
        public let ttl: Int64?
        /// Current age and freshness lifetime at the time of the query (RFC 9111 §4.2).
        public let age: Int64
        public let lifetime: Int64
        /// Where the lifetime comes from: `max-age`, `Expires - Date`, the heuristic, the rule's ttl…
        public let lifetimeSource: String
        /// The contract verdict it was served with (`passed`, or the violations as JSON), when its rule had one.
        public var contract: String? = nil

        public var isFresh: Bool { age < lifetime }
        public var contentType: String? { headers[.contentType] }

        /// The entry for scripts (`--json`, the admin API); `headers` adds the header fields.
        public func json(headers withHeaders: Bool) -> JSONValue {
            var members: [(String, JSONValue)] = [
                ("id", .number(Int(id))), ("url", .string(url)), ("method", .string(method)), ("host", .string(host)),
                ("status", .number(status)), ("size", .number(Int(size))), ("hits", .number(Int(hits))),
                ("age", .number(Int(age))), ("lifetime", .number(Int(lifetime))), ("fresh", .bool(isFresh)),
                ("lifetime_source", .string(lifetimeSource)),
                ("stored_at", .string(HTTPDate.format(Int(responseTime)))), ("request_time", .double(requestTime)),
                ("response_time", .double(responseTime)), ("last_access", .string(HTTPDate.format(Int(lastAccess)))),
                ("content_type", .optional(contentType)), ("rule", .optional(rule)),
                ("ttl_override", ttl.map { .number(Int($0)) } ?? .null), ("variant", .string(variant)),
                ("etag", .optional(headers[.etag])), ("last_modified", .optional(headers[.lastModified])),
                ("contract", .optional(contract)),
            ]
            if withHeaders {
                members.append(("headers", .array(headers.map { .strings([$0.name, $0.value]) })))
            }
            return .object(members)
        }
    }

    /// What `list` selects and how it orders.
    public struct Filter: Sendable {
        public enum Freshness: Sendable { case any, fresh, stale }
        public enum Order: String, Sendable, CaseIterable { case recent, size, hits, age }
        public var host: String?
        /// A glob over the whole URL (`*` any run of characters, `?` one).
        public var url: String?
        public var status: Int?
        /// A media type, compared without parameters and case.
        public var contentType: String?
        public var freshness = Freshness.any
        public var order = Order.recent
        public var limit = 100
        public init() {}
    }

    public struct Stats: Sendable {
        public let entries: Int
        public let bytes: Int64
        public let capacity: Int64
        public let hits: Int64
        /// Lookups served from the file and lookups that went upstream, as counted by the proxy
        /// (written every 10 s); `hitRatio` is `nil` before the first lookup.
        public let lookupHits: Int64
        public let lookupMisses: Int64
        public var hitRatio: Double? {
            lookupHits + lookupMisses > 0 ? Double(lookupHits) / Double(lookupHits + lookupMisses) : nil
        }
        public let oldest: Double?
        public let newest: Double?
        public let topHosts: [(host: String, entries: Int, bytes: Int64)]
        /// Storing decisions on record: stored / not stored.
        public let decisionsStored: Int
        public let decisionsRefused: Int
    }

    /// The last storing decision for a URL (`sluice cache why`).
    public struct Decision: Sendable {
        public let url: String
        public let time: Double
        public let stored: Bool
        public let reason: String?
    }

    /// What `verify` found.
    public struct Verification: Sendable {
        public let integrity: [String]
        public let checked: Int
        /// Entries whose stored chunks do not add up to their size, or skip a sequence number.
        public let damaged: [(id: Int64, url: String, problem: String)]
        /// Entries not visible (removed while a hit read them, or cut by a crash mid-write) and
        /// the bytes of their chunks: the proxy frees them when their readers end, or at its next start.
        public let hidden: (entries: Int, bytes: Int64)
        public var isSound: Bool { integrity == ["ok"] && damaged.isEmpty }
    }

    public let path: String
    let database: Database
    private let settings: Configuration.Cache

    /// Opens the cache file of `settings` (read-only unless `writable`).
    public init(settings: Configuration.Cache, writable: Bool = false) throws {
        path = settings.path
        self.settings = settings
        database = try Database(path: settings.path, readOnly: !writable)
        guard database.userVersion <= CacheStore.schemaVersion else {
            throw InspectorError(
                "\(settings.path) has schema version \(database.userVersion); this sluice reads up to \(CacheStore.schemaVersion)"
            )
        }
        guard database.userVersion >= 1 else { throw InspectorError("\(settings.path) is not a Sluice cache (yet)") }
    }

    var columns: String {
        "id, key, url, method, host, status, reason, headers, variant, request_time, response_time, size, hits, last_access, rule, "
            + (database.userVersion >= 2 ? "ttl" : "NULL") + ", "
            + (database.userVersion >= 5 ? "contract" : "NULL")  // the fifth migration added it
    }

    func entry(_ row: Statement, now: Double) -> Entry {
        let headers = CacheStore.decode(row.text(at: 7) ?? "")
        let facts = CacheStore.Facts(headers, shared: settings.shared, heuristic: settings.heuristic)
        let requestTime = row.double(at: 9)
        let responseTime = row.double(at: 10)
        let ttl = row.isNull(at: 15) ? nil : row.int64(at: 15)
        return Entry(
            id: row.int64(at: 0), key: row.text(at: 1) ?? "", url: row.text(at: 2) ?? "", method: row.text(at: 3) ?? "",
            host: row.text(at: 4) ?? "", status: Int(row.int64(at: 5)), reason: row.text(at: 6) ?? "",
            headers: headers, variant: row.text(at: 8) ?? "", requestTime: requestTime, responseTime: responseTime,
            size: row.int64(at: 11), hits: row.int64(at: 12), lastAccess: row.double(at: 13), rule: row.text(at: 14),
            ttl: ttl, age: facts.currentAge(requestTime: requestTime, responseTime: responseTime, now: now),
            lifetime: ttl ?? facts.lifetime,
            lifetimeSource: ttl != nil
                ? "the rule's ttl (override)" : CachePolicy.lifetimeSource(headers, shared: settings.shared),
            contract: row.text(at: 16))
    }

    /// Complete entries that fit `filter`, in its order, at most `filter.limit`.
    public func list(_ filter: Filter, now: Double) throws -> [Entry] {
        var conditions = ["complete=1"]
        var bindings: [Any] = []
        if let host = filter.host {
            bindings.append(host.lowercased())
            conditions.append("host=?\(bindings.count)")
        }
        if let url = filter.url {
            bindings.append(url)
            conditions.append("url GLOB ?\(bindings.count)")
        }
        if let status = filter.status {
            bindings.append(Int64(status))
            conditions.append("status=?\(bindings.count)")
        }
        let order =
            switch filter.order {
            case .recent: "last_access DESC, id DESC"
            case .size: "size DESC, id"
            case .hits: "hits DESC, id"
            case .age: "response_time ASC, id"
            }
        // Freshness and content type need the decoded head: filtered here, so no SQL limit then.
        let postFilter = filter.freshness != .any || filter.contentType != nil
        let limit = postFilter ? "" : " LIMIT \(max(0, filter.limit))"
        let statement = try database.prepare(
            "SELECT \(columns) FROM entries WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order)\(limit)"
        )
        for (index, value) in bindings.enumerated() {
            if let text = value as? String { try statement.bind(text, at: Int32(index + 1)) }
            if let number = value as? Int64 { try statement.bind(number, at: Int32(index + 1)) }
        }
        let wanted = filter.contentType.map(CacheInspector.mediaType)
        var entries: [Entry] = []
        while try statement.step() {
            let entry = entry(statement, now: now)
            if filter.freshness == .fresh, !entry.isFresh { continue }
            if filter.freshness == .stale, entry.isFresh { continue }
            if let wanted, entry.contentType.map(CacheInspector.mediaType) != wanted { continue }
            entries.append(entry)
            if entries.count >= filter.limit { break }
        }
        return entries
    }

    /// A Content-Type without parameters, lower-cased (validation's ``MediaType``; a malformed one as sent).
    public static func mediaType(_ text: String) -> String {
        MediaType(text)?.essence ?? text.trimmingOWS().lowercased()
    }

    /// Every stored variant for a URL, or the entry with this number.
    public func entries(for keyOrURL: String, now: Double) throws -> [Entry] {
        let byID = Int64(keyOrURL)
        let statement = try database.prepare(
            "SELECT \(columns) FROM entries WHERE complete=1 AND "
                + (byID != nil ? "id=?1" : "(key=?1 OR url=?1)") + " ORDER BY response_time DESC")
        if let byID { try statement.bind(byID, at: 1) } else { try statement.bind(keyOrURL, at: 1) }
        var entries: [Entry] = []
        while try statement.step() { entries.append(entry(statement, now: now)) }
        return entries
    }

    /// Streams an entry's stored body (the origin's bytes) chunk by chunk; returns the byte count.
    @discardableResult
    public func body(of id: Int64, _ sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        let statement = try database.prepare("SELECT data FROM chunks WHERE entry=?1 ORDER BY seq")
        try statement.bind(id, at: 1)
        var total: Int64 = 0
        while try statement.step() {
            let chunk = statement.blob(at: 0)
            total += Int64(chunk.count)
            try chunk.withUnsafeBytes { try sink($0) }
        }
        return total
    }

    /// Totals from the index and the rows' fixed columns (no header decoding: fast on big caches).
    /// Chunk `seq` of an entry's stored body (`nil` past the end), for streaming with backpressure.
    public func chunk(of id: Int64, seq: Int64) throws -> [UInt8]? {
        let statement = try database.prepare("SELECT data FROM chunks WHERE entry=?1 AND seq=?2")
        try statement.bind(id, at: 1)
        try statement.bind(seq, at: 2)
        return try statement.step() ? statement.blob(at: 0) : nil
    }

    public func stats() throws -> Stats {
        // What entries take, as the capacity counts it (body, head, URL and key: the sixth
        // migration's `footprint`), as `/stats` says; a file from before it has bodies only.
        let taken = database.userVersion >= 6 ? "footprint" : "size"
        let totals = try database.prepare(
            "SELECT count(*), COALESCE(sum(\(taken)), 0), COALESCE(sum(hits), 0), min(response_time), max(response_time) FROM entries WHERE complete=1"
        )
        _ = try totals.step()
        let count = Int(totals.int64(at: 0))
        let hosts = try database.prepare(
            "SELECT host, count(*), sum(\(taken)) FROM entries WHERE complete=1 GROUP BY host ORDER BY count(*) DESC, host LIMIT 10"
        )
        var top: [(String, Int, Int64)] = []
        while try hosts.step() { top.append((hosts.text(at: 0) ?? "", Int(hosts.int64(at: 1)), hosts.int64(at: 2))) }
        let decisions = try database.prepare("SELECT sum(stored), count(*) - sum(stored) FROM decisions")
        _ = try decisions.step()
        var lookups: [String: Int64] = [:]
        if database.userVersion >= 4 {
            let counters = try database.prepare("SELECT name, value FROM counters")
            while try counters.step() { lookups[counters.text(at: 0) ?? ""] = counters.int64(at: 1) }
        }
        return Stats(
            entries: count, bytes: totals.int64(at: 1), capacity: settings.capacity, hits: totals.int64(at: 2),
            lookupHits: lookups["hits"] ?? 0, lookupMisses: lookups["misses"] ?? 0,
            oldest: count > 0 ? totals.double(at: 3) : nil, newest: count > 0 ? totals.double(at: 4) : nil,
            topHosts: top, decisionsStored: Int(decisions.int64(at: 0)), decisionsRefused: Int(decisions.int64(at: 1)))
    }

    /// The last storing decision recorded for a URL.
    public func decision(for url: String) throws -> Decision? {
        let statement = try database.prepare("SELECT url, time, stored, reason FROM decisions WHERE url=?1")
        try statement.bind(CacheStore.decisionKey(url), at: 1)
        guard try statement.step() else { return nil }
        return Decision(
            url: url, time: statement.double(at: 1), stored: statement.int64(at: 2) == 1,
            reason: statement.text(at: 3))
    }

    /// `PRAGMA integrity_check`, then every entry's chunks against its recorded size.
    public func verify() throws -> Verification {
        var integrity: [String] = []
        let check = try database.prepare("PRAGMA integrity_check")
        while try check.step() { integrity.append(check.text(at: 0) ?? "") }
        let sizes = try database.prepare(
            """
            SELECT e.id, e.url, e.size, COALESCE(sum(length(c.data)), 0), count(c.seq), COALESCE(max(c.seq), -1)
            FROM entries e LEFT JOIN chunks c ON c.entry = e.id WHERE e.complete=1 GROUP BY e.id
            """)
        var checked = 0
        var damaged: [(Int64, String, String)] = []
        while try sizes.step() {
            checked += 1
            let (id, url, size, stored) = (
                sizes.int64(at: 0), sizes.text(at: 1) ?? "", sizes.int64(at: 2), sizes.int64(at: 3)
            )
            if stored != size {
                damaged.append((id, url, "body is \(stored) bytes, entry says \(size)"))
            } else if sizes.int64(at: 5) + 1 != sizes.int64(at: 4) {
                damaged.append((id, url, "chunk sequence has gaps"))
            }
        }
        let waiting = try database.prepare(
            """
            SELECT count(DISTINCT e.id), COALESCE(sum(length(c.data)), 0)
            FROM entries e LEFT JOIN chunks c ON c.entry = e.id WHERE e.complete<>1
            """)
        _ = try waiting.step()
        return Verification(
            integrity: integrity, checked: checked, damaged: damaged,
            hidden: (Int(waiting.int64(at: 0)), waiting.int64(at: 1)))
    }
}

/// Why the cache file cannot be inspected.
public struct InspectorError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
