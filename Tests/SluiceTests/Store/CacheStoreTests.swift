import EventIO
import Foundation
import Logging
import SQLite
import SluiceTestKit
import Testing

@testable import Sluice

@Suite("CacheStore and its memory tier")
struct CacheStoreTests {
    static func temporaryPath() -> String {
        TestScratch.root.appendingPathComponent("sluice-store-\(UUID().uuidString).sqlite").path
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func store(_ path: String, memory: Int64 = 8 << 20) throws -> CacheStore {
        var settings = Configuration.Cache()
        settings.path = path
        settings.memory = memory
        return try CacheStore(settings: settings, logger: Logger(label: "test"))
    }

    @Test("Stored header text keeps an opaque value's bytes, and reads old text as before")
    func headerTextKeepsOpaqueValues() throws {
        var headers = HTTPFields()
        headers.append(name: "Content-Type", value: "text/plain")
        Array("attachment; filename=caf\u{e9}".utf8).withUnsafeBytes { utf8 in
            headers.append(name: "X-Utf8", wireValue: utf8, code: .other)
        }
        ([0x61, 0xE9] as [UInt8]).withUnsafeBytes { latin1 in
            headers.append(name: "Content-Disposition", wireValue: latin1, code: FieldCode("Content-Disposition"))
        }
        let decoded = CacheStore.decode(CacheStore.encode(headers))
        #expect(decoded == headers)
        #expect(decoded.fields.map(\.opaque) == [false, false, true])
        #expect(ResponseWriter.head(status: 200, reason: "OK", headers: decoded).contains(0xE9))
        #expect(CacheStore.decode("A: 1\r\nB: 2\r\n") == HTTPFields([("A", "1"), ("B", "2")]))
    }

    @Test("A version 1 file is migrated in place and its entries stay readable")
    func migratesVersionOne() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let old = try Database(path: path)
            try old.execute(CacheStore.migrator.migrations[0].sql)
            try old.execute("PRAGMA user_version=1")
            try old.execute(
                """
                INSERT INTO entries(key, variant, vary, method, url, host, status, reason, headers, request_time,
                  response_time, size, last_access, complete)
                VALUES('http://a/x', '', '', 'GET', 'http://a/x', 'a', 200, 'OK',
                  'Cache-Control: max-age=60\r\nContent-Length: 2\r\n', 1, 1, 2, 1, 1);
                INSERT INTO chunks VALUES(1, 0, x'6869');
                """)
        }
        let store = try Self.store(path)
        #expect(store.database.userVersion == CacheStore.schemaVersion)
        let entries = store.candidates(key: "http://a/x")
        #expect(entries.count == 1)
        #expect(entries.first?.facts.lifetime == 60)
        #expect(entries.first?.ttl == nil)
        #expect(store.wholeBody(try #require(entries.first)) == Array("hi".utf8))
    }

    @Test("Storing decisions stay bounded: unique pass-through URLs do not grow the file without end")
    func decisionsBounded() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try Self.store(path)
        let limit = CacheStore.decisionLimit(capacity: store.capacity)
        #expect(limit == 65_536, "the default capacity (1 GiB): one per 16 KiB")
        for n in 0..<(limit + limit / 5) {
            store.recordDecision(url: "http://a/\(n)", now: Double(n), stored: false, reason: "no-store")
        }
        store.flushPending(force: true)
        let count = try store.database.prepare("SELECT count(*), min(time) FROM decisions")
        #expect(try count.step())
        // Pruned back to the limit whenever it is 10 % over.
        #expect(count.int64(at: 0) <= Int64(limit + limit / 10))
        #expect(count.int64(at: 0) >= Int64(limit))
        // The newest are the ones kept.
        #expect(count.double(at: 1) >= Double(limit / 10 - 1))
    }

    @Test("A small cache keeps fewer decisions, and a long URL's decision under a bounded key that `why` finds")
    func decisionsOfSmallCacheAndLongURLs() throws {
        #expect(CacheStore.decisionLimit(capacity: 1 << 20) == 100)
        #expect(CacheStore.decisionLimit(capacity: 64 << 20) == 4_096)
        #expect(CacheStore.decisionLimit(capacity: 1 << 40) == 100_000)
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        var settings = Configuration.Cache()
        settings.path = path
        settings.capacity = 1 << 20
        let store = try CacheStore(settings: settings, logger: Logger(label: "test"))
        let query = String(repeating: "q", count: 7_000)
        for n in 0..<3_000 {
            store.recordDecision(url: "http://a/x?\(query)&n=\(n)", now: Double(n), stored: false, reason: "no-store")
        }
        store.flushPending(force: true)
        let rows = try store.database.prepare("SELECT count(*), max(length(CAST(url AS BLOB))) FROM decisions")
        #expect(try rows.step())
        #expect(rows.int64(at: 0) <= 110)
        #expect(rows.int64(at: 1) <= Int64(CacheStore.decisionKeyLimit))
        // Distinct long URLs keep distinct keys; a short one is kept as it is.
        let a = CacheStore.decisionKey("http://a/x?\(query)&n=1")
        #expect(a != CacheStore.decisionKey("http://a/x?\(query)&n=2"))
        #expect(a == CacheStore.decisionKey("http://a/x?\(query)&n=1"))
        #expect(CacheStore.decisionKey("http://a/short") == "http://a/short")
        let inspector = try CacheInspector(settings: settings)
        let newest = try #require(try inspector.decision(for: "http://a/x?\(query)&n=2999"))
        #expect(newest.url == "http://a/x?\(query)&n=2999")
        #expect(newest.reason == "no-store")
        #expect(try inspector.decision(for: "http://a/x?\(query)&n=1") == nil, "an old one was dropped")
    }

    @Test(
        "The capacity bounds the file: unique long URLs with tiny bodies, and many small bodies, stay within it",
        arguments: [(7_000, 2), (20, 1_000), (20, 5_000)])
    func capacityBoundsTheFile(queryLength: Int, bodyLength: Int) throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        var settings = Configuration.Cache()
        settings.path = path
        settings.capacity = 512 << 10
        let query = String(repeating: "q", count: queryLength)
        let body = [UInt8](repeating: 0x62, count: bodyLength)
        let count = 3 * Int(settings.capacity) / (bodyLength + queryLength)
        do {
            let store = try CacheStore(settings: settings, logger: Logger(label: "test"))
            for n in 0..<count {
                let url = try #require(TargetURL("http://a/x?\(query)&n=\(n)"))
                let headers = HTTPFields([("Cache-Control", "max-age=60"), ("Content-Length", "\(bodyLength)")])
                let new = CacheStore.NewEntry(
                    stored: StoredHead(
                        key: url.description, variant: "", varyNames: [], status: 200, reason: "OK",
                        headers: headers, requestTime: 0, responseTime: Double(n)),
                    method: "GET", url: url, rule: nil, limit: 1 << 20, expectedLength: Int64(bodyLength),
                    proposedHeaders: headers)
                let id = try #require(store.begin(new))
                let writer = CacheWriter(store: store, entry: id, new: new)
                _ = body.withUnsafeBytes { writer.append($0) }
                #expect(writer.finish() == nil)
            }
            #expect(store.totalBytes <= settings.capacity)
            let rows = try store.database.prepare(
                "SELECT count(*), COALESCE(SUM(\(CacheStore.footprint)), 0) FROM entries WHERE complete=1")
            #expect(try rows.step())
            #expect(rows.int64(at: 0) > 5 && rows.int64(at: 0) < count, "older entries went")
            #expect(rows.int64(at: 1) == store.totalBytes, "the running count is the file's")
            #expect(store.candidates(key: "http://a/x?\(query)&n=\(count - 1)").count == 1, "the newest stays")
        }  // closed: the last connection writes the WAL back into the file
        // The file itself: within the capacity, give or take an eighth (pages of the schema, the
        // free pages of what was evicted, which the next stores reuse, index pages split as keys
        // arrive). It was 5 times the capacity for 1 KB bodies, 10 times for 7 KB URLs.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size <= Int(settings.capacity) * 9 / 8, "\(size) bytes for a capacity of \(settings.capacity)")
        // Reopened, the count read from the file is the same measure.
        let again = try CacheStore(settings: settings, logger: Logger(label: "test"))
        #expect(again.totalBytes > settings.capacity / 2 && again.totalBytes <= settings.capacity)
    }

    @Test("An entry purged while written never lends its id to the next: its late chunks and commit touch nothing else")
    func purgedWriterKeepsToItself() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try Self.store(path)
        func new(_ key: String, length: Int) throws -> CacheStore.NewEntry {
            let url = try #require(TargetURL(key))
            let headers = HTTPFields([("Cache-Control", "max-age=60"), ("Content-Length", "\(length)")])
            return CacheStore.NewEntry(
                stored: StoredHead(
                    key: key, variant: "", varyNames: [], status: 200, reason: "OK", headers: headers, requestTime: 0,
                    responseTime: 0),
                method: "GET", url: url, rule: nil, limit: 1 << 20, expectedLength: Int64(length),
                proposedHeaders: headers)
        }
        // Given a large body being written, and everything purged meanwhile (a purge from another
        // process removes its rows and chunks as this one does)
        let largeNew = try new("http://a/large", length: 4)
        let large = try #require(store.begin(largeNew))
        let lateWriter = CacheWriter(store: store, entry: large, new: largeNew)
        _ = Array("LA".utf8).withUnsafeBytes { lateWriter.append($0) }
        try store.database.execute("DELETE FROM chunks; DELETE FROM entries")
        // When another response is stored, then the first writer goes on and ends
        let smallNew = try new("http://a/small", length: 2)
        let small = try #require(store.begin(smallNew))
        #expect(small != large, "a purged entry's id is not given again")
        let writer = CacheWriter(store: store, entry: small, new: smallNew)
        _ = Array("ok".utf8).withUnsafeBytes { writer.append($0) }
        #expect(writer.finish() == nil)
        _ = Array("RG".utf8).withUnsafeBytes { lateWriter.append($0) }
        _ = lateWriter.finish()
        // Then the second entry is whole and alone, and nothing of the first is stored
        let stored = try #require(store.candidates(key: "http://a/small").first)
        #expect(store.wholeBody(stored) == Array("ok".utf8))
        #expect(store.candidates(key: "http://a/large").isEmpty)
        let chunks = try store.database.prepare("SELECT count(*) FROM chunks WHERE entry=?1")
        try chunks.bind(large, at: 1)
        #expect(try chunks.step() && chunks.int64(at: 0) == 0, "the purged writer's chunks went with it")
        // And ids keep growing after a restart with an empty table
        try store.database.execute("DELETE FROM chunks; DELETE FROM entries")
        let reopened = try Self.store(path)
        #expect(try #require(reopened.begin(try new("http://a/again", length: 1))) > small)
    }

    @Test("The byte count takes away what it added: a refreshed head, a replaced variant and an invalidation leave 0")
    func byteCountDoesNotDrift() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try Self.store(path)
        func put(_ key: String, headers: HTTPFields) throws {
            let url = try #require(TargetURL(key))
            let new = CacheStore.NewEntry(
                stored: StoredHead(
                    key: key, variant: "", varyNames: [], status: 200, reason: "OK", headers: headers, requestTime: 0,
                    responseTime: 0),
                method: "GET", url: url, rule: nil, limit: 1 << 20, expectedLength: 2, proposedHeaders: headers)
            let id = try #require(store.begin(new))
            let writer = CacheWriter(store: store, entry: id, new: new)
            _ = Array("hi".utf8).withUnsafeBytes { writer.append($0) }
            #expect(writer.finish() == nil)
        }
        let small = HTTPFields([("Cache-Control", "max-age=60"), ("Content-Length", "2")])
        try put("http://a/x", headers: small)
        try put("http://a/x", headers: small)  // replaces the first
        let entry = try #require(store.candidates(key: "http://a/x").first)
        var grown = small
        grown.append(name: "X-Large", value: String(repeating: "v", count: 3_000))
        store.refresh(entry.refreshed(headers: grown, facts: entry.facts, requestTime: 1, responseTime: 1, ttl: nil))
        #expect(store.totalBytes > 0)
        store.invalidate(key: "http://a/x")
        #expect(store.totalBytes == 0)
    }

    @Test("An entry's footprint is never null or less than its body, whatever its row's size")
    func footprintEverywhere() throws {
        let database = try Database(path: ":memory:")
        _ = try CacheStore.migrator.migrate(database)
        let insert = try database.prepare(
            "INSERT INTO entries(key, variant, vary, method, url, host, status, reason, headers, request_time, response_time, size, last_access, complete) VALUES(?1, '', '', 'GET', ?1, 'a', 200, 'OK', '', 1, 1, 1000, 1, 1)"
        )
        for length in stride(from: 10, through: 9_000, by: 1) {
            defer { insert.reset() }
            try insert.bind("http://a/" + String(repeating: "q", count: length), at: 1)
            try insert.step()
        }
        let select = try database.prepare(
            "SELECT count(*), min(\(CacheStore.footprint)), count(\(CacheStore.footprint)) FROM entries")
        #expect(try select.step())
        #expect(select.int64(at: 2) == select.int64(at: 0), "a footprint was null")
        #expect(select.int64(at: 1) > 1000)
    }

    @Test("The memory tier keeps within its budget and forgets what changes")
    func memoryTierBudget() {
        let hot = HotSet(budget: 1 << 20)
        var headers = HTTPFields()
        for n in 0..<10 { headers.append(name: "X-Field-\(n)", value: String(repeating: "v", count: 40)) }
        for n in 0..<5000 {
            let entry = CacheStore.Entry(
                key: "k\(n)", ref: EntryRef(row: Int64(n)), variant: "", varyNames: [], status: 200, reason: "OK",
                headers: headers,
                requestTime: 0, responseTime: 0, size: 1000, ttl: nil,
                facts: CacheStore.Facts(headers, shared: true, heuristic: .init()))
            hot.remember("k\(n)", [entry])
            hot.keep(body: [UInt8](repeating: 1, count: 1000), entry: EntryRef(row: Int64(n)))
        }
        #expect(hot.entryBytes <= (1 << 20) / 8)
        #expect(hot.bodyBytes <= (1 << 20))
        #expect(hot.entries("k4999") != nil)
        #expect(hot.entries("k0") == nil)
        #expect(hot.body(EntryRef(row: 4999)) != nil)
        hot.forget("k4999")
        #expect(hot.entries("k4999") == nil)
        #expect(hot.body(EntryRef(row: 4999)) == nil)
        hot.keep(body: [UInt8](repeating: 1, count: 2 << 20), entry: EntryRef(row: 1))
        #expect(hot.body(EntryRef(row: 1)) == nil, "a body over the per-body limit is not kept")
    }

    @Test("Memory tier: bodies of 16 KiB and more are kept as files, counted, and read back whole")
    func memoryTierFiles() {
        let hot = HotSet(budget: 8 << 20)
        let large = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 * 31) }
        hot.keep(body: large, entry: EntryRef(row: 1))
        hot.keep(body: Array(large[0..<1000]), entry: EntryRef(row: 2))
        #expect(hot.files == 1)
        guard case .file(let file)? = hot.body(EntryRef(row: 1)) else {
            Issue.record("a 40 KB body is kept as a file")
            return
        }
        #expect(Array(file.bytes) == large)
        #expect(hot.body(EntryRef(row: 1))?.withUnsafeBytes { Array($0) } == large)
        guard case .bytes(let small)? = hot.body(EntryRef(row: 2)) else {
            Issue.record("a 1000-byte body is kept as bytes")
            return
        }
        #expect(small == Array(large[0..<1000]))
        hot.forget(entry: EntryRef(row: 1))
        #expect(hot.files == 0 && hot.body(EntryRef(row: 1)) == nil)
        #expect(Array(file.bytes) == large, "a file in use stays readable after the tier let go of it")
        hot.keep(body: large, entry: EntryRef(row: 3))
        hot.forgetAll()
        #expect(hot.files == 0)
        #expect(hot.fileLimit > 0)
    }

    @Test("Body search streams chunk by chunk and finds text that spans two chunks")
    func searchAcrossChunks() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try Self.store(path)
        var body = [UInt8](repeating: 0x2E, count: 3 * CacheWriter.chunkSize)
        let needle = Array("needle-across-the-seam".utf8)
        body.replaceSubrange(
            (CacheWriter.chunkSize - 7)..<(CacheWriter.chunkSize - 7 + needle.count), with: needle)
        let url = try #require(TargetURL("http://a/long"))
        let head = ResponseHead(status: 200, headers: HTTPFields([("Cache-Control", "max-age=60")]))
        let new = CacheStore.NewEntry(
            stored: StoredHead(
                key: url.description, variant: "", varyNames: [], status: head.status, reason: head.reason,
                headers: head.headers, requestTime: 0, responseTime: 0),
            method: "GET", url: url, rule: nil, limit: 1 << 30, expectedLength: nil, proposedHeaders: head.headers)
        let id = try #require(store.begin(new))
        let writer = CacheWriter(store: store, entry: id, new: new)
        _ = body.withUnsafeBytes { writer.append($0) }
        #expect(writer.finish() == nil)
        var settings = Configuration.Cache()
        settings.path = path
        let inspector = try CacheInspector(settings: settings)
        #expect(try inspector.search("needle-across-the-seam", in: [.body], limit: 10, now: 0).count == 1)
        #expect(try inspector.search("needle-not-there", in: [.body], limit: 10, now: 0).isEmpty)
        #expect(try inspector.search("LONG", in: [.url], limit: 10, now: 0).count == 1)
    }
}
