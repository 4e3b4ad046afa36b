import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A recording: one SQLite file of ``RecordedExchange`` rows, in the order they were recorded.
/// Written in WAL mode, a batch per transaction, so a crash or a full disk leaves every batch
/// written before it readable. The schema (`application_id` 0x534C5243, `user_version` 3; a
/// version 1 file, without `breakpoint` and `response_trailers`, and a version 2 file, without
/// `response_trailers`, are read as they are and gain the columns when written to):
///
/// ```sql
/// CREATE TABLE exchanges (
///   id INTEGER PRIMARY KEY,            -- the recorded order
///   started REAL NOT NULL,             -- seconds since the epoch
///   duration REAL NOT NULL,            -- seconds, request to end of response
///   wait REAL,                         -- seconds to the response head
///   method TEXT NOT NULL, url TEXT NOT NULL,
///   request_headers TEXT NOT NULL,     -- JSON [["Name","value"],…], credentials redacted
///   request_body BLOB NOT NULL,        -- up to record.max_body
///   request_body_size INTEGER NOT NULL,
///   request_body_sha256 TEXT NOT NULL, -- of the whole body, lowercase hex
///   status INTEGER NOT NULL, reason TEXT NOT NULL,
///   response_headers TEXT NOT NULL,    -- as the client got them, less framing and Sluice's fields
///   response_body BLOB NOT NULL,       -- as the client got it, up to record.max_body
///   response_body_size INTEGER NOT NULL,
///   source TEXT NOT NULL,              -- proxy | har
///   rule TEXT,
///   breakpoint TEXT,                   -- JSON: what breakpoints did (note, sent, received)
///   response_trailers TEXT);           -- JSON as the headers; NULL without trailers (gRPC's status)
/// CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
/// ```
public final class Recording {
    /// `PRAGMA application_id` of a recording ("SLRC").
    public static let applicationID: Int64 = 0x534C_5243
    public static let schemaVersion = 3
    static let columns =
        "id, started, duration, wait, method, url, request_headers, request_body, request_body_size, request_body_sha256, status, reason, response_headers, response_body, response_body_size, source, rule, breakpoint, response_trailers"
    /// The same columns without the bodies (their kept lengths instead).
    static let headColumns =
        "id, started, duration, wait, method, url, request_headers, length(request_body), request_body_size, request_body_sha256, status, reason, response_headers, length(response_body), response_body_size, source, rule, breakpoint, response_trailers"
    /// The columns each version added, in order, each the last of the list then.
    static let addedColumns = [(2, "breakpoint"), (3, "response_trailers")]

    /// The columns as a file of `version` has them (NULL for those added later).
    static func columns(_ names: String, version: Int) -> String {
        var names = names
        for (added, column) in addedColumns.reversed() where version < added {
            names = String(names.dropLast(", \(column)".count))
        }
        return names + String(repeating: ", NULL", count: addedColumns.count(where: { version < $0.0 }))
    }

    /// Why a file cannot be used as a recording.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        /// The disk (or `record.max_size`) is full.
        public var isFull = false
        init(_ description: String, isFull: Bool = false) {
            self.description = description
            self.isFull = isFull
        }
    }

    public let path: String
    let database: Database
    /// The file's schema version (1 to ``schemaVersion``), once checked.
    private var version = Recording.schemaVersion
    private var insert: Statement?
    private var bodyStatement: Statement?

    private init(path: String, database: Database) {
        self.path = path
        self.database = database
    }

    /// Opens a recording to read; refuses anything that is not one.
    public static func open(_ path: String) throws(Failure) -> Recording {
        guard let file = fopen(path, "rb") else { throw Failure("cannot read \(path)") }
        fclose(file)
        let database: Database
        do {
            database = try Database(path: path, readOnly: true)
        } catch {
            throw Failure("\(path) cannot be opened: \(error)")
        }
        let recording = Recording(path: path, database: database)
        try recording.checkSchema()
        return recording
    }

    /// Opens a recording to add to, creating it (and its schema) when the file does not exist.
    /// - Parameter maxBytes: the most the file may grow to (`record.max_size`; 0: no limit).
    public static func openForWriting(_ path: String, maxBytes: Int64 = 0) throws(Failure) -> Recording {
        let database: Database
        do {
            database = try Database(path: path)
        } catch {
            throw Failure("\(path) cannot be opened for recording: \(Recording.explain(error))")
        }
        let recording = Recording(path: path, database: database)
        do {
            // A new file (the WAL switch may already have written its first page) has no tables.
            let tables = try database.prepare("SELECT count(*) FROM sqlite_master")
            let fresh = try tables.step() && tables.int64(at: 0) == 0 && recording.pragma("application_id") == 0
            if fresh {
                try database.transaction {
                    try database.execute("PRAGMA application_id=\(applicationID)")
                    try database.execute(
                        """
                        CREATE TABLE exchanges (id INTEGER PRIMARY KEY, started REAL NOT NULL, duration REAL NOT NULL,
                          wait REAL, method TEXT NOT NULL, url TEXT NOT NULL, request_headers TEXT NOT NULL,
                          request_body BLOB NOT NULL, request_body_size INTEGER NOT NULL,
                          request_body_sha256 TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL,
                          response_headers TEXT NOT NULL, response_body BLOB NOT NULL,
                          response_body_size INTEGER NOT NULL, source TEXT NOT NULL, rule TEXT, breakpoint TEXT,
                          response_trailers TEXT);
                        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                        """)
                    try database.setUserVersion(schemaVersion)
                }
            }
        } catch {
            throw Failure("\(path) cannot be opened for recording: \(Recording.explain(error))")
        }
        try recording.checkSchema()
        if recording.version < schemaVersion {
            // Version 2 added what breakpoints did, 3 the response's trailers: the columns are
            // added, nothing else changes.
            do {
                try database.transaction {
                    // Another writer may have brought it further meanwhile.
                    let version = database.userVersion
                    for (added, column) in addedColumns where version < added {
                        try database.execute("ALTER TABLE exchanges ADD COLUMN \(column) TEXT")
                    }
                    if version < schemaVersion { try database.setUserVersion(schemaVersion) }
                }
                recording.version = schemaVersion
            } catch {
                throw Failure("\(path) cannot be brought to recording schema \(schemaVersion): \(error)")
            }
        }
        if maxBytes > 0 {
            let pageSize = (try? recording.pragma("page_size")) ?? 4096
            try? database.execute("PRAGMA max_page_count=\(max(2, maxBytes / max(512, pageSize)))")
        }
        return recording
    }

    private func pragma(_ name: String) throws -> Int64 {
        let statement = try database.prepare("PRAGMA \(name)")
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    private static func explain(_ error: any Error) -> String {
        if let failure = error as? SQLiteError, failure.isCorrupt { return "it is not an SQLite file" }
        return "\(error)"
    }

    /// Refuses a file that is not a recording this build reads (another SQLite file, a newer schema).
    private func checkSchema() throws(Failure) {
        let id: Int64
        do {
            id = try pragma("application_id")
        } catch {
            throw Failure("\(path) is not a Sluice recording: \(Recording.explain(error))")
        }
        guard id == Recording.applicationID else {
            throw Failure("\(path) is an SQLite file but not a Sluice recording (application_id \(id))")
        }
        let version = database.userVersion
        guard (1...Recording.schemaVersion).contains(version) else {
            throw Failure(
                "\(path) has recording schema \(version); this build reads schemas 1 to \(Recording.schemaVersion)")
        }
        self.version = version
        do {
            _ = try database.prepare(
                "SELECT \(Recording.columns(Recording.columns, version: version)) FROM exchanges LIMIT 0")
        } catch {
            throw Failure("\(path) is damaged: \(error)")
        }
    }

    // MARK: - Writing

    /// Writes `exchanges` in one transaction: all of them or, on a failure, none.
    public func append(_ exchanges: [RecordedExchange]) throws(Failure) {
        try append(rows: exchanges.map(RecordingRow.init))
    }

    /// Writes rows in one transaction: all of them or, on a failure, none.
    func append(rows exchanges: [RecordingRow]) throws(Failure) {
        guard !exchanges.isEmpty else { return }
        do {
            let statement =
                try insert
                ?? database.prepare(
                    "INSERT INTO exchanges(\(Recording.columns.dropFirst(4))) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18)"
                )
            insert = statement
            try database.transaction {
                for exchange in exchanges {
                    defer { statement.reset() }
                    try statement.bind(exchange.started, at: 1)
                    try statement.bind(exchange.duration, at: 2)
                    if let wait = exchange.wait {
                        try statement.bind(wait, at: 3)
                    } else {
                        try statement.bindNull(at: 3)
                    }
                    try statement.bind(exchange.method, at: 4)
                    try statement.bind(exchange.url, at: 5)
                    try statement.bindText(exchange.requestHeaders, at: 6)
                    try statement.bind(exchange.requestBody, at: 7)
                    try statement.bind(exchange.requestBodySize, at: 8)
                    try statement.bind(exchange.requestBodyDigest, at: 9)
                    try statement.bind(Int64(exchange.status), at: 10)
                    try statement.bind(exchange.reason, at: 11)
                    try statement.bindText(exchange.responseHeaders, at: 12)
                    try statement.bind(exchange.responseBody, at: 13)
                    try statement.bind(exchange.responseBodySize, at: 14)
                    try statement.bind(exchange.source, at: 15)
                    if let rule = exchange.rule {
                        try statement.bind(rule, at: 16)
                    } else {
                        try statement.bindNull(at: 16)
                    }
                    if let breakpoint = exchange.breakpoint {
                        try statement.bind(breakpoint, at: 17)
                    } else {
                        try statement.bindNull(at: 17)
                    }
                    if let trailers = exchange.responseTrailers {
                        try statement.bindText(trailers, at: 18)
                    } else {
                        try statement.bindNull(at: 18)
                    }
                    try statement.step()
                }
            }
        } catch {
            let full = (error as? SQLiteError)?.isFull == true
            throw Failure(full ? "\(path) is full: \(error)" : "\(path) not written: \(error)", isFull: full)
        }
    }

    // MARK: - Reading

    /// How many exchanges it holds.
    public func count() throws(Failure) -> Int {
        do {
            let statement = try database.prepare("SELECT count(*) FROM exchanges")
            return try statement.step() ? Int(statement.int64(at: 0)) : 0
        } catch {
            throw Failure("\(path) cannot be read: \(error)")
        }
    }

    /// Every exchange in the recorded order; `bodies: false` reads heads only (bodies empty, their
    /// kept lengths in ``RecordedExchange/keptResponseBytes``).
    public func exchanges(bodies: Bool = true) throws(Failure) -> [RecordedExchange] {
        try select("ORDER BY id", bodies: bodies)
    }

    /// One exchange by its number.
    public func exchange(id: Int64) throws(Failure) -> RecordedExchange? {
        try select("WHERE id=\(id)", bodies: true).first
    }

    /// The response body of one exchange.
    public func responseBody(id: Int64) throws(Failure) -> [UInt8] {
        do {
            let statement = try bodyStatement ?? database.prepare("SELECT response_body FROM exchanges WHERE id=?1")
            bodyStatement = statement
            defer { statement.reset() }
            try statement.bind(id, at: 1)
            return try statement.step() ? statement.blob(at: 0) : []
        } catch {
            throw Failure("\(path) cannot be read: \(error)")
        }
    }

    private func select(_ tail: String, bodies: Bool) throws(Failure) -> [RecordedExchange] {
        var out: [RecordedExchange] = []
        do {
            let statement = try database.prepare(
                "SELECT \(Recording.columns(bodies ? Recording.columns : Recording.headColumns, version: version)) FROM exchanges \(tail)"
            )
            while try statement.step() {
                guard let method = statement.text(at: 4), let url = statement.text(at: 5),
                    let requestHeaders = statement.text(at: 6).flatMap(RecordedExchange.fields(json:)),
                    let responseHeaders = statement.text(at: 12).flatMap(RecordedExchange.fields(json:))
                else {
                    throw Failure("\(path): exchange \(statement.int64(at: 0)) is damaged (its header fields)")
                }
                var exchange = RecordedExchange(
                    started: statement.double(at: 1), duration: statement.double(at: 2),
                    wait: statement.isNull(at: 3) ? nil : statement.double(at: 3), method: method, url: url,
                    requestHeaders: requestHeaders, requestBody: bodies ? statement.blob(at: 7) : [],
                    requestBodySize: statement.int64(at: 8), requestBodyDigest: statement.text(at: 9) ?? "",
                    status: Int(statement.int64(at: 10)), reason: statement.text(at: 11) ?? "",
                    responseHeaders: responseHeaders, responseBody: bodies ? statement.blob(at: 13) : [],
                    responseBodySize: statement.int64(at: 14), source: statement.text(at: 15) ?? "proxy",
                    rule: statement.text(at: 16))
                exchange.id = statement.int64(at: 0)
                exchange.breakpoint = statement.text(at: 17)
                if let trailers = statement.text(at: 18) {
                    guard let fields = RecordedExchange.fields(json: trailers) else {
                        throw Failure("\(path): exchange \(statement.int64(at: 0)) is damaged (its trailer fields)")
                    }
                    exchange.responseTrailers = fields
                }
                if !bodies {
                    exchange.keptRequestBytes = statement.int64(at: 7)
                    exchange.keptResponseBytes = statement.int64(at: 13)
                }
                out.append(exchange)
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("\(path) cannot be read: \(error)")
        }
        return out
    }
}
