import CSQLite

/// A prepared statement; finalized in `deinit`. Bind, step, read columns, reset.
/// - SeeAlso: `sqlite3_prepare_v2`, `sqlite3_step`, `sqlite3_bind_*`, `sqlite3_column_*`.
public final class Statement {
    let handle: OpaquePointer
    /// The owning connection (kept alive while the statement lives).
    public let database: Database
    /// The SQL text.
    public let sql: String

    init(database: Database, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(database.handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw SQLiteError(database: database.handle, code: result, sql: sql)
        }
        handle = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: - Binding (1-based indexes)

    /// Binds an integer.
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds text (copied), all of it: a NUL inside is text too (its length is given, not
    /// found at the first NUL).
    public func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        var value = value
        let result = value.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, sluice_sqlite_transient())
            }
            return UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), sluice_sqlite_transient())
            }
        }
        try check(result)
    }

    /// Binds UTF-8 bytes as text (copied).
    public func bindText(_ utf8: [UInt8], at index: Int32) throws(SQLiteError) {
        if utf8.isEmpty { return try check(sqlite3_bind_text(handle, index, "", 0, sluice_sqlite_transient())) }
        let result = utf8.withUnsafeBytes { bytes in
            sqlite3_bind_text(
                handle, index, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                sluice_sqlite_transient())
        }
        try check(result)
    }

    /// Binds bytes (copied); an empty array binds an empty blob, not NULL.
    public func bind(_ value: [UInt8], at index: Int32) throws(SQLiteError) {
        if value.isEmpty { return try check(sqlite3_bind_zeroblob(handle, index, 0)) }
        let result = value.withUnsafeBytes { bytes in
            sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), sluice_sqlite_transient())
        }
        try check(result)
    }

    /// Binds a double.
    public func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    /// Binds NULL.
    public func bindNull(at index: Int32) throws(SQLiteError) { try check(sqlite3_bind_null(handle, index)) }

    // MARK: - Stepping

    /// Advances: `true` when a row is available, `false` when done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(database: database.handle, code: result, sql: sql)
        }
    }

    /// Resets for another run and clears bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Columns (0-based indexes)

    /// An integer column.
    public func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// A double column.
    public func double(at index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// A text column (`nil` for NULL).
    public func text(at index: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, index) else { return nil }
        // Its length, not its first NUL: text bound with a NUL inside reads back whole.
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// A blob column (empty for NULL).
    public func blob(at index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether a column is NULL.
    public func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw SQLiteError(database: database.handle, code: result, sql: sql) }
    }
}
