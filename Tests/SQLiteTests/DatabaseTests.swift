import Foundation
import SQLite
import Testing

@Suite("SQLite: database, statements, migrations")
final class DatabaseTests {
    /// This test's folder, removed after it with the files in it.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "sluice-sqlite-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A new database file's path in the test's folder.
    func temporaryPath() -> String { directory.appendingPathComponent("\(UUID().uuidString).sqlite").path }

    static let migrator = Migrator([
        .init(
            "entries",
            sql: "CREATE TABLE entries (key TEXT PRIMARY KEY, body BLOB NOT NULL, hits INTEGER NOT NULL DEFAULT 0)"),
        .init("hosts", sql: "ALTER TABLE entries ADD COLUMN host TEXT"),
    ])

    @Test("A file opens in WAL mode, migrates in order, and round-trips text and bytes")
    func roundTrip() throws {
        let path = temporaryPath()
        let database = try Database(path: path)
        #expect(try Self.migrator.migrate(database) == .migrated(from: 0, to: 2))
        #expect(try Self.migrator.migrate(database) == .migrated(from: 2, to: 2))
        let mode = try database.prepare("PRAGMA journal_mode")
        #expect(try mode.step())
        #expect(mode.text(at: 0) == "wal")
        let insert = try database.prepare("INSERT INTO entries (key, body, host) VALUES (?, ?, ?)")
        for (key, body) in [("a", [UInt8]([0, 1, 2, 255])), ("empty", [])] {
            try insert.bind(key, at: 1)
            try insert.bind(body, at: 2)
            try insert.bind("example.com", at: 3)
            try insert.step()
            insert.reset()
        }
        let select = try database.prepare("SELECT body, host FROM entries WHERE key = ?")
        try select.bind("a", at: 1)
        #expect(try select.step())
        #expect(select.blob(at: 0) == [0, 1, 2, 255])
        select.reset()
        try select.bind("empty", at: 1)
        #expect(try select.step())
        #expect(!select.isNull(at: 0))
        #expect(select.blob(at: 0).isEmpty)
        // Text is bound and read whole, a NUL inside included; an empty text is not NULL.
        for text in ["a\u{0}b", "", "caf\u{e9}"] {
            let key = "text-\(text.utf8.count)"
            try insert.bind(key, at: 1)
            try insert.bind([1], at: 2)
            try insert.bind(text, at: 3)
            try insert.step()
            insert.reset()
            select.reset()
            try select.bind(key, at: 1)
            #expect(try select.step())
            #expect(select.text(at: 1) == text)
        }
        #expect(try database.quickCheck())
    }

    @Test("Two connections migrating one new file at once: each step is applied once, neither fails")
    func concurrentMigration() throws {
        for _ in 0..<10 {
            let path = temporaryPath()
            let errors = ErrorBox()
            let group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        let database = try Database(path: path)
                        _ = try Self.migrator.migrate(database)
                    } catch {
                        errors.add("\(error)")
                    }
                }.start()
            }
            group.wait()
            #expect(errors.all.isEmpty, "\(errors.all)")
            #expect(try Database(path: path).userVersion == 2)
        }
    }

    final class ErrorBox: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [String] = []
        func add(_ text: String) { lock.withLock { errors.append(text) } }
        var all: [String] { lock.withLock { errors } }
    }

    @Test("A failed transaction leaves nothing behind; errors carry code and SQL")
    func transactionRollback() throws {
        let database = try Database(path: temporaryPath())
        _ = try Self.migrator.migrate(database)
        #expect(throws: SQLiteError.self) {
            try database.transaction {
                try database.execute("INSERT INTO entries (key, body) VALUES ('k', x'00')")
                try database.execute("INSERT INTO entries (key, body) VALUES ('k', x'01')")
            }
        }
        let count = try database.prepare("SELECT count(*) FROM entries")
        #expect(try count.step())
        #expect(count.int64(at: 0) == 0)
        do {
            _ = try database.prepare("SELECT absent FROM nowhere")
            Issue.record("prepared invalid SQL")
        } catch {
            #expect(error.sql == "SELECT absent FROM nowhere")
            #expect(error.message.contains("no such"))
        }
    }

    @Test("A file from a newer version is reported, and a file that is not a database is corrupt")
    func tooNewAndCorrupt() throws {
        let path = temporaryPath()
        let database = try Database(path: path)
        try database.setUserVersion(7)
        #expect(try Self.migrator.migrate(database) == .tooNew(fileVersion: 7, known: 2))
        let garbage = temporaryPath()
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: garbage))
        do {
            let broken = try Database(path: garbage)
            _ = try broken.quickCheck()
            Issue.record("garbage opened as a database")
        } catch {
            #expect(error.isCorrupt)
        }
    }
}
