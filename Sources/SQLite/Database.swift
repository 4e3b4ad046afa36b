import CSQLite

/// One SQLite connection, confined to the thread that uses it.
/// Opened in WAL mode with `synchronous=NORMAL` and a busy timeout, so readers in other
/// processes never see "database is locked" for ordinary contention.
/// - SeeAlso: `sqlite3_open_v2`, `PRAGMA journal_mode`.
public final class Database {
    let handle: OpaquePointer
    /// The file's path (`:memory:` for a private in-memory database).
    public let path: String

    /// Opens (creating if needed) the database at `path`.
    /// - Parameters:
    ///   - path: file path.
    ///   - readOnly: open without write access; `false` by default.
    ///   - busyTimeoutMilliseconds: how long to wait for a lock; 5000 by default.
    public init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws(SQLiteError) {
        self.path = path
        var connection: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &connection, flags, nil)
        guard result == SQLITE_OK, let connection else {
            let error = SQLiteError(database: connection, code: result)
            sqlite3_close_v2(connection)
            throw error
        }
        handle = connection
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        if !readOnly {
            try enterWAL(waitingAtMost: busyTimeoutMilliseconds)
            try execute("PRAGMA synchronous=NORMAL")
        }
    }

    /// `PRAGMA journal_mode=WAL`, tried again while another connection holds the lock it needs:
    /// two processes opening one new file at once race for it, and SQLite answers the loser
    /// "busy" at once rather than through the busy handler.
    private func enterWAL(waitingAtMost milliseconds: Int32) throws(SQLiteError) {
        // Each try answers at once (no busy handler inside it): the wait is these sleeps alone.
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, milliseconds) }
        var waited: Int32 = 0
        while true {
            do {
                return try execute("PRAGMA journal_mode=WAL")
            } catch {
                guard error.isBusy, waited < milliseconds else { throw error }
                sqlite3_sleep(10)
                waited += 10
            }
        }
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements that return no rows needed by the caller.
    public func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw SQLiteError(database: handle, code: result, sql: sql) }
    }

    /// Prepares a statement (reuse it with ``Statement/reset()``).
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open (statements are not each their own).
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The row id of the last insert.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// `PRAGMA quick_check`: `true` when the file is sound.
    public func quickCheck() throws(SQLiteError) -> Bool {
        let statement = try prepare("PRAGMA quick_check")
        guard try statement.step() else { return false }
        return statement.text(at: 0) == "ok"
    }

    /// `PRAGMA user_version`.
    public var userVersion: Int { (try? readUserVersion()) ?? 0 }

    /// `PRAGMA user_version`, or the error that kept it from being read.
    public func readUserVersion() throws(SQLiteError) -> Int {
        let statement = try prepare("PRAGMA user_version")
        guard try statement.step() else { return 0 }
        return Int(statement.int64(at: 0))
    }

    /// Sets `PRAGMA user_version`.
    public func setUserVersion(_ version: Int) throws(SQLiteError) { try execute("PRAGMA user_version=\(version)") }

    /// The SQLite library version.
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
