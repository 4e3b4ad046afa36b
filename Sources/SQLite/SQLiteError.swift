import CSQLite

/// A failed SQLite call: the primary and extended result codes, SQLite's message and the SQL.
public struct SQLiteError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public let code: Int32
    /// The extended result code.
    public let extendedCode: Int32
    /// `sqlite3_errmsg` at the time.
    public let message: String
    /// The statement, when one was involved.
    public let sql: String?

    init(database: OpaquePointer?, code: Int32, sql: String? = nil) {
        self.code = code & 0xFF
        extendedCode = database.map { sqlite3_extended_errcode($0) } ?? code
        message = database.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        self.sql = sql
    }

    /// Whether another connection held a lock too long (`SQLITE_BUSY` / `SQLITE_LOCKED`).
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    /// Whether the file is damaged or not a database.
    public var isCorrupt: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
    /// Whether the disk (or the size limit) is full.
    public var isFull: Bool { code == SQLITE_FULL }

    public var description: String {
        // The extended code only when it says more than the primary one.
        "SQLite error \(code)\(extendedCode != code ? " (\(extendedCode))" : ""): \(message)"
            + (sql.map { " in \($0)" } ?? "")
    }
}
