import Logging
import SQLite
import Testing

@testable import Sluice

/// Pins down the cache's batched bookkeeping: hits, misses and storing decisions reach the file when flushed.
@Suite("CacheLedger: batched hits, misses and storing decisions")
struct CacheLedgerTests {
    /// The cache schema in memory with entries 1 and 2 (no hits yet), and a ledger over it.
    static func ledger() throws -> (CacheLedger, Database) {
        let database = try Database(path: ":memory:")
        _ = try CacheStore.migrator.migrate(database)
        for id in 1...2 {
            try database.execute(
                """
                INSERT INTO entries(id, key, variant, vary, method, url, host, status, reason, headers, request_time,
                  response_time, last_access, complete)
                VALUES(\(id), 'http://a/\(id)', '', '', 'GET', 'http://a/\(id)', 'a', 200, 'OK', '', 1, 1, 1, 1)
                """)
        }
        return (try CacheLedger(database: database, decisionLimit: 100_000, logger: Logger(label: "test")), database)
    }

    /// The first column of the first row, or `nil` when there is none.
    static func integer(_ database: Database, _ sql: String) throws -> Int64? {
        let statement = try database.prepare(sql)
        return try statement.step() ? statement.int64(at: 0) : nil
    }

    static func hits(_ database: Database, _ entry: Int) throws -> Int64? {
        try integer(database, "SELECT hits FROM entries WHERE id=\(entry)")
    }

    static func counter(_ database: Database, _ name: String) throws -> Int64? {
        try integer(database, "SELECT value FROM counters WHERE name='\(name)'")
    }

    @Test("Hits and misses wait in memory; a flush writes hit counts, the latest access and adds to the counters")
    func touches() throws {
        let (ledger, database) = try Self.ledger()
        ledger.touch(1, now: 50)
        ledger.touch(1, now: 70)
        ledger.touch(2, now: 60)
        ledger.countMiss()
        #expect(try Self.hits(database, 1) == 0, "nothing is written before a flush")
        #expect(try Self.counter(database, "hits") == nil)
        ledger.flush(force: true)
        #expect(try Self.hits(database, 1) == 2)
        #expect(try Self.integer(database, "SELECT last_access FROM entries WHERE id=1") == 70)
        #expect(try Self.hits(database, 2) == 1)
        #expect(try Self.counter(database, "hits") == 3)
        #expect(try Self.counter(database, "misses") == 1)
        ledger.touch(2, now: 80)
        ledger.countMiss()
        ledger.flush(force: true)
        #expect(try Self.hits(database, 2) == 2, "added to what the file holds")
        #expect(try Self.counter(database, "hits") == 4)
        #expect(try Self.counter(database, "misses") == 2)
    }

    @Test("Right after a flush, decisions are written each time while hits wait for the interval or a forced flush")
    func interval() throws {
        let (ledger, database) = try Self.ledger()
        ledger.touch(1, now: 10)
        ledger.flush(force: true)
        ledger.touch(1, now: 20)
        ledger.countMiss()
        ledger.record(url: "http://a/1", now: 20, stored: true, reason: nil)
        ledger.flush()
        #expect(try Self.integer(database, "SELECT count(*) FROM decisions") == 1)
        #expect(try Self.hits(database, 1) == 1, "held: fewer than touchInterval seconds since the last write")
        #expect(try Self.counter(database, "misses") == 0, "the forced flush wrote the counters; this miss waits")
        ledger.flush(force: true)
        #expect(try Self.hits(database, 1) == 2)
        #expect(try Self.counter(database, "misses") == 1)
    }

    @Test("One decision row per URL, the latest; a reason is not carried into a later decision without one")
    func decisions() throws {
        let (ledger, database) = try Self.ledger()
        ledger.record(url: "http://a/x", now: 1, stored: false, reason: "no-store")
        ledger.flush()
        ledger.record(url: "http://a/x", now: 2, stored: true, reason: nil)
        ledger.record(url: "http://a/y", now: 3, stored: false, reason: "private")
        ledger.record(url: "http://a/y", now: 4, stored: false, reason: "Set-Cookie")
        ledger.flush()
        let statement = try database.prepare("SELECT url, time, stored, reason FROM decisions ORDER BY url")
        var rows: [String] = []
        while try statement.step() {
            rows.append(
                "\(statement.text(at: 0) ?? "") \(statement.double(at: 1)) \(statement.int64(at: 2)) "
                    + (statement.text(at: 3) ?? "NULL"))
        }
        #expect(rows == ["http://a/x 2.0 1 NULL", "http://a/y 4.0 0 Set-Cookie"])
    }

    @Test("URLs decided in turn, and one decided many times over, each keep their latest decision")
    func decisionsInTurn() throws {
        let (ledger, database) = try Self.ledger()
        for time in 1...5 { ledger.record(url: "http://a/poll", now: Double(time), stored: false, reason: "no-store") }
        ledger.record(url: "http://a/x", now: 6, stored: true, reason: nil)
        ledger.record(url: "http://a/poll", now: 7, stored: false, reason: "private")
        ledger.record(url: "http://a/x", now: 8, stored: false, reason: "Set-Cookie")
        ledger.flush()
        ledger.record(url: "http://a/x", now: 9, stored: true, reason: nil)
        ledger.flush()
        let statement = try database.prepare("SELECT url, time, reason FROM decisions ORDER BY url")
        var rows: [String] = []
        while try statement.step() {
            rows.append("\(statement.text(at: 0) ?? "") \(statement.double(at: 1)) \(statement.text(at: 2) ?? "NULL")")
        }
        #expect(rows == ["http://a/poll 7.0 private", "http://a/x 9.0 NULL"])
    }

    @Test("More than 10 000 pending decisions are written without waiting for the next flush")
    func pendingBound() throws {
        let (ledger, database) = try Self.ledger()
        for n in 0..<10_000 { ledger.record(url: "http://a/\(n)", now: Double(n), stored: false, reason: nil) }
        #expect(try Self.integer(database, "SELECT count(*) FROM decisions") == 0)
        ledger.record(url: "http://a/last", now: 10_000, stored: false, reason: nil)
        #expect(try Self.integer(database, "SELECT count(*) FROM decisions") == 10_001)
    }
}
