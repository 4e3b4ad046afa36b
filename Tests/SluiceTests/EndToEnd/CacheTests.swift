import Foundation
import SQLite
import SluiceTestKit
import Synchronization
import Testing

@testable import Sluice

/// A settable clock for the proxy (no test sleeps for freshness).
final class TestClock: Sendable {
    let now = Mutex<Double>(1_800_000_000)
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
    func install(on proxy: ProxyHarness) {
        proxy.onLoop { [self] server in server.clock = { self.now.withLock { $0 } } }
    }
}

@Suite("The SQLite response cache")
struct CacheTests {
    static func cacheable(_ body: String, _ extra: [(String, String)] = []) -> OriginServer.Reply {
        .respond(
            status: 200, headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=60")] + extra,
            body: Array(body.utf8))
    }

    @Test("A fresh response is served from the file with Age and Cache-Status; stale goes upstream again")
    func freshThenStale() throws {
        let counter = Mutex(0)
        let origin = try OriginServer { _ in
            let n = counter.withLock {
                $0 += 1; return $0
            }
            return Self.cacheable("version \(n)")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        let first = try client.request(RawClient.get(origin.url("/a")))
        #expect(first.text == "version 1")
        #expect(first.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        clock.advance(30)
        let second = try client.request(RawClient.get(origin.url("/a")))
        #expect(second.text == "version 1")
        #expect(second.header("age") == "30")
        #expect(second.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        clock.advance(31)
        let third = try client.request(RawClient.get(origin.url("/a")))
        #expect(third.text == "version 2")
        #expect(third.header("cache-status") == "Sluice; fwd=stale; stored")
        #expect(origin.requests.count == 2)
        let head = try client.request(
            RawClient.get(origin.url("/a")).replacingOccurrences(of: "GET", with: "HEAD"), method: "HEAD")
        #expect(head.status == 200)
        #expect(head.header("content-length") == "9")
        #expect(origin.requests.count == 2)
    }

    @Test("Request directives: no-cache and max-age=0 go upstream, max-stale accepts stale, only-if-cached 504")
    func requestDirectives() throws {
        let origin = try OriginServer { _ in Self.cacheable("x") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/d")))
        #expect(
            try client.request(RawClient.get(origin.url("/d"), extra: "Cache-Control: no-cache\r\n")).header(
                "cache-status")?.contains("fwd=request") == true)
        #expect(
            try client.request(RawClient.get(origin.url("/d"), extra: "Pragma: no-cache\r\n")).header("cache-status")?
                .contains("fwd=request") == true)
        clock.advance(10)
        // Still fresh, but older than the request allows: the request passed it over (RFC 9211 §2.2).
        #expect(
            try client.request(RawClient.get(origin.url("/d"), extra: "Cache-Control: max-age=5\r\n")).header(
                "cache-status")?.contains("fwd=request") == true)
        clock.advance(100)
        let stale = try client.request(RawClient.get(origin.url("/d"), extra: "Cache-Control: max-stale=200\r\n"))
        #expect(stale.header("cache-status")?.contains("hit") == true)
        #expect(stale.header("cache-status")?.contains("stale") == true)
        let requests = origin.requests.count
        let none = try client.request(RawClient.get(origin.url("/never"), extra: "Cache-Control: only-if-cached\r\n"))
        #expect(none.status == 504)
        #expect(none.header("cache-status") == "Sluice; fwd=uri-miss; detail=only-if-cached")
        #expect(origin.requests.count == requests)
    }

    @Test("Not stored: no-store, private, Set-Cookie, Authorization, Vary: *, no freshness, partial bodies")
    func notStored() throws {
        let origin = try OriginServer { request in
            switch request.target {
            case "/no-store":
                return .respond(status: 200, headers: [("Cache-Control", "no-store")], body: Array("a".utf8))
            case "/private": return Self.cacheable("p", [("Cache-Control", "private")])
            case "/cookie": return Self.cacheable("c", [("Set-Cookie", "id=1")])
            case "/vary-star": return Self.cacheable("v", [("Vary", "*")])
            case "/plain": return .text("no freshness")
            case "/reset": return .resetMidBody(declared: 1000, sent: 10)
            default: return Self.cacheable("auth")
            }
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        for (path, detail, extra) in [
            ("/no-store", "no-store", ""), ("/private", "private", ""), ("/cookie", "set-cookie", ""),
            ("/vary-star", "vary-star", ""), ("/plain", "no-freshness", ""),
            ("/auth", "authorization", "Authorization: Basic eDp5\r\n"),
        ] {
            let client = try RawClient(port: proxy.port)
            let response = try client.request(RawClient.get(origin.url(path), extra: extra))
            #expect(
                response.header("cache-status")?.hasSuffix("detail=\(detail)") == true,
                "\(path): \(response.header("cache-status") ?? "-")")
            _ = try client.request(RawClient.get(origin.url(path), extra: extra))
        }
        #expect(origin.requests.count == 12)
        // A transfer cut mid-body leaves nothing behind.
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/reset")))
        _ = try? client.reader.readResponse()
        let again = try RawClient(port: proxy.port)
        try again.send(RawClient.get(origin.url("/reset")))
        _ = try? again.reader.readResponse()
        #expect(origin.requests.filter { $0.target == "/reset" }.count == 2)
        #expect(proxy.stats.cacheHits == 0)
    }

    @Test("Vary: each variant is stored and selected by the request's header values")
    func vary() throws {
        let origin = try OriginServer { request in
            Self.cacheable(
                "lang=\(request.header("accept-language") ?? "none")",
                [("Vary", "Accept-Language"), ("Vary", "X-Other")])
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/v"), extra: "Accept-Language: de\r\n")).text == "lang=de")
        let fr = try client.request(RawClient.get(origin.url("/v"), extra: "Accept-Language: fr\r\n"))
        #expect(fr.text == "lang=fr")
        #expect(fr.header("cache-status")?.contains("fwd=vary-miss") == true)
        #expect(try client.request(RawClient.get(origin.url("/v"), extra: "Accept-Language: de\r\n")).text == "lang=de")
        #expect(try client.request(RawClient.get(origin.url("/v"), extra: "Accept-Language: fr\r\n")).text == "lang=fr")
        #expect(origin.requests.count == 2)
        // A field sent empty is not a field not sent (§4.1), whichever was stored first.
        let single = try OriginServer { _ in Self.cacheable("one", [("Vary", "Accept-Encoding")]) }
        defer { single.stop() }
        for (path, emptyFirst) in [("/empty-first", true), ("/absent-first", false)] {
            let empty = "Accept-Encoding:\r\n"
            _ = try client.request(RawClient.get(single.url(path), extra: emptyFirst ? empty : ""))
            let other = try client.request(RawClient.get(single.url(path), extra: emptyFirst ? "" : empty))
            #expect(other.header("cache-status")?.contains("fwd=vary-miss") == true, "\(path)")
        }
    }

    @Test("The time the origin took to answer counts in the stored response's age (§4.2.3 response_delay)")
    func responseDelay() throws {
        // Given an origin that dates its answer when it sends it, 1.2 s after the request, with Age: 10
        let origin = try OriginServer { _ in
            .delay(
                seconds: 1.2,
                then: .respond(
                    status: 200, headers: [("Cache-Control", "max-age=3600"), ("Age", "10")], body: Array("ok".utf8)))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/slow")))
        // Then a hit at once is 11 seconds old: the Age received plus the delay
        let hit = try client.request(RawClient.get(origin.url("/slow")))
        #expect(hit.header("cache-status")?.contains("hit") == true)
        #expect(hit.header("age") == "11")
    }

    @Test("A 304 to a client's own conditions freshens the stored response its tag names (§4.3.4)")
    func clientConditionalFreshens() throws {
        // Given a stored response that is stale at once, and an origin that confirms "a" for 100 s
        let origin = try OriginServer { request in
            switch request.header("if-none-match") {
            case "\"a\"":
                .respond(status: 304, headers: [("ETag", "\"a\""), ("Cache-Control", "max-age=100")], body: [])
            case "\"b\"": .respond(status: 304, headers: [("Cache-Control", "max-age=100")], body: [])
            default:
                .respond(
                    status: 200, headers: [("ETag", "\"a\""), ("Cache-Control", "max-age=0")], body: Array("ok".utf8))
            }
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for path in ["/confirmed", "/other", "/authorized"] { _ = try client.request(RawClient.get(origin.url(path))) }
        // When clients revalidate their own copies: of the stored response, and of another one (no tag back)
        let confirmed = try client.request(RawClient.get(origin.url("/confirmed"), extra: "If-None-Match: \"a\"\r\n"))
        let other = try client.request(RawClient.get(origin.url("/other"), extra: "If-None-Match: \"b\"\r\n"))
        #expect(confirmed.status == 304 && other.status == 304)
        // Then the stored response the 304 named is fresh again; the other is not
        let hit = try client.request(RawClient.get(origin.url("/confirmed")))
        #expect(hit.header("cache-status")?.contains("hit") == true && hit.text == "ok")
        let stale = try client.request(RawClient.get(origin.url("/other")))
        #expect(stale.header("cache-status")?.contains("hit") != true)
        #expect(origin.requests.filter { $0.target == "/confirmed" }.count == 2)
        // A 304 to a request with Authorization updates nothing shared (§3.5): it may be that client's.
        let authorized = try client.request(
            RawClient.get(origin.url("/authorized"), extra: "Authorization: Bearer alice\r\nIf-None-Match: \"a\"\r\n"))
        #expect(authorized.status == 304)
        let anonymous = try client.request(RawClient.get(origin.url("/authorized")))
        #expect(anonymous.header("cache-status")?.contains("hit") != true, "\(anonymous.headers)")
    }

    @Test("A successful POST invalidates the URI; the cache survives a restart; client validators get 304")
    func invalidationRestartAndConditional() throws {
        let counter = Mutex(0)
        let origin = try OriginServer { request in
            if request.method == "POST" { return .text("posted") }
            let n = counter.withLock {
                $0 += 1; return $0
            }
            return Self.cacheable("v\(n)", [("ETag", "\"e\(n)\"")])
        }
        defer { origin.stop() }
        let file = TestScratch.root.appendingPathComponent(
            "sluice-cache-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        var configuration = Configuration()
        configuration.cache.path = file
        do {
            let proxy = try ProxyHarness(configuration: configuration)
            let client = try RawClient(port: proxy.port)
            #expect(try client.request(RawClient.get(origin.url("/r"))).text == "v1")
            #expect(
                try client.request(RawClient.get(origin.url("/r"), extra: "If-None-Match: \"e1\"\r\n")).status == 304)
            let post =
                "POST \(origin.url("/r")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 1\r\n\r\nx"
            #expect(try client.request(post).text == "posted")
            #expect(try client.request(RawClient.get(origin.url("/r"))).text == "v2")
            proxy.shutdown()
        }
        let restarted = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: restarted.port)
        let response = try client.request(RawClient.get(origin.url("/r")))
        #expect(response.text == "v2")
        #expect(response.header("cache-status")?.hasPrefix("Sluice; hit") == true)
    }

    @Test(
        "A stored response purged (by another process) after it was chosen, before any of it went out: a 503 that says so, never a silent close"
    )
    func purgedBeforeServed() throws {
        let origin = try OriginServer { _ in
            .stream(status: 200, headers: [("Cache-Control", "max-age=60")], total: 3 * 1024 * 1024)
        }
        defer { origin.stop() }
        let file = TestScratch.root.appendingPathComponent("sluice-cache-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        var configuration = Configuration()
        configuration.cache.path = file
        configuration.cache.memory = 0
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/big"))).body.count == 3 * 1024 * 1024)
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.cacheStores } >= 1 })
        // The body's chunks go (the row stays: the lookup still chooses it).
        try Database(path: file).execute("DELETE FROM chunks")
        let response = try client.request(RawClient.get(origin.url("/big")))
        #expect(response.status == 503, "\(response.status) \(response.headers)")
        #expect(ErrorTests.problemType(response) == "stored-response-gone", "\(response.text)")
    }

    @Test(
        "A file that refuses an entry: the response goes, says store-failed, and /health says not-storing until a store succeeds"
    )
    func storeFailedIsSaid() throws {
        let origin = try OriginServer { request in Self.cacheable("doc \(request.target)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        // (A read-only connection refuses every write, as a full disk does.)
        proxy.onLoop { try? $0.cache?.database.execute("PRAGMA query_only=1") }
        let client = try RawClient(port: proxy.port)
        let refused = try client.request(RawClient.get(origin.url("/a")))
        #expect(refused.text == "doc /a")
        #expect(refused.header("cache-status")?.contains("detail=store-failed") == true, "\(refused.headers)")
        func health() throws -> String? {
            let answer = try RawClient(port: admin).request(
                "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
            return (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["cache"] as? String
        }
        #expect(try health() == "not-storing")
        proxy.onLoop { try? $0.cache?.database.execute("PRAGMA query_only=0") }
        let stored = try client.request(RawClient.get(origin.url("/b")))
        #expect(stored.header("cache-status")?.contains("stored") == true, "\(stored.headers)")
        #expect(try health() == "ok")
    }

    @Test("Large bodies stream into and out of the file; entries over the size limit are not kept")
    func largeBodies() throws {
        let origin = try OriginServer { request in
            .stream(
                status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Type", "application/octet-stream")],
                total: request.target == "/big" ? 3 * 1024 * 1024 + 17 : 9 * 1024 * 1024)
        }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.cache.maxEntrySize = 8 * 1024 * 1024
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let first = try client.request(RawClient.get(origin.url("/big")))
        let second = try client.request(RawClient.get(origin.url("/big")))
        #expect(second.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        #expect(second.body == first.body)
        #expect(second.body.count == 3 * 1024 * 1024 + 17)
        let huge = try client.request(RawClient.get(origin.url("/huge")))
        #expect(huge.header("cache-status")?.hasSuffix("detail=too-large") == true)
        #expect(huge.body.count == 9 * 1024 * 1024)
    }

    @Test("A stale entry with validators is revalidated; a 304 refreshes it and the body comes from the file")
    func revalidation() throws {
        let origin = try OriginServer { request in
            if request.header("if-none-match") == "\"v1\"" {
                return .respond(
                    status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=0"), ("X-Fresh", "2")],
                    body: [])
            }
            return .respond(
                status: 200,
                headers: [
                    ("ETag", "\"v1\""), ("Cache-Control", "max-age=0"), ("X-Fresh", "1"),
                    ("Content-Type", "text/plain"),
                ],
                body: Array("the body".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let first = try client.request(RawClient.get(origin.url("/etag")))
        #expect(first.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        let second = try client.request(RawClient.get(origin.url("/etag")))
        #expect(second.status == 200)
        #expect(second.text == "the body")
        #expect(second.header("x-fresh") == "2")
        #expect(second.header("content-length") == "8")
        #expect(second.header("cache-status") == "Sluice; fwd=stale; fwd-status=304")
        // Validated by the origin for this request: no Age (RFC 9111 §5.1).
        #expect(second.header("age") == nil)
        #expect(origin.requests.last?.header("if-none-match") == "\"v1\"")
        // The client's own validators are passed through and the origin's 304 reaches it.
        let own = try client.request(RawClient.get(origin.url("/etag"), extra: "If-None-Match: \"v1\"\r\n"))
        #expect(own.status == 304)
    }

    @Test("A 200 to HEAD updates the stored GET it matches (§4.3.5); one that does not match removes it")
    func headFreshensStoredGet() throws {
        // The origin ignores conditionals; `/same` keeps its ETag, `/changed` answers HEAD with a new one.
        let origin = try OriginServer { request in
            let isGet = request.method == "GET"
            let tag = request.target.hasSuffix("/changed") && !isGet ? "\"v2\"" : "\"v1\""
            return .respond(
                status: 200,
                headers: [
                    ("ETag", tag), ("Cache-Control", isGet ? "max-age=0" : "max-age=600"),
                    ("X-Version", isGet ? "get" : "head"), ("Content-Type", "text/plain"),
                ],
                body: Array("the body".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        func head(_ path: String) throws -> ReceivedResponse {
            try client.send("HEAD \(origin.url(path)) HTTP/1.1\r\nHost: x\r\n\r\n")
            return try client.reader.readResponse(method: "HEAD")
        }
        // Given a stored GET that is already stale
        _ = try client.request(RawClient.get(origin.url("/same")))
        // When a HEAD comes back 200 with the same validator and a longer lifetime
        #expect(try head("/same").status == 200)
        #expect(origin.requests.last?.method == "HEAD")
        // Then the stored GET has the HEAD's fields and freshness: served without the origin
        let served = try client.request(RawClient.get(origin.url("/same")))
        #expect(served.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        #expect(served.header("x-version") == "head")
        #expect(served.header("content-length") == "8")
        #expect(served.text == "the body")
        // A HEAD with a different validator makes the stored GET go: the next GET is a miss.
        _ = try client.request(RawClient.get(origin.url("/changed")))
        #expect(try head("/changed").header("etag") == "\"v2\"")
        let after = try client.request(RawClient.get(origin.url("/changed")))
        #expect(after.header("cache-status")?.hasPrefix("Sluice; fwd=uri-miss") == true)
    }

    @Test("Small bodies are served from memory; a purge by another process is seen within a millisecond")
    func memoryTierFollowsTheFile() throws {
        let counter = Mutex(0)
        let origin = try OriginServer { _ in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            return Self.cacheable("version \(n)")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/m")))
        for _ in 0..<3 { #expect(try client.request(RawClient.get(origin.url("/m"))).text == "version 1") }
        // Another process (`sluice cache purge`, sqlite3) removes the entry behind the proxy's back.
        let path = proxy.onLoop { $0.configuration.cache.path }
        let other = try Database(path: path)
        try other.execute("DELETE FROM chunks; DELETE FROM entries")
        // Kept: the file's version is looked at once a millisecond at most, by design; the next
        // request must come after that (nothing to observe from outside until then).
        Thread.sleep(forTimeInterval: 0.005)
        let after = try client.request(RawClient.get(origin.url("/m")))
        #expect(after.text == "version 2")
        #expect(after.header("cache-status") == "Sluice; fwd=uri-miss; stored")
    }

    @Test("Hits whose head comes from the memory tier carry the same fields as the general path")
    func memoryTierHeads() throws {
        let origin = try OriginServer { _ in
            .respond(
                status: 200,
                headers: [
                    ("Content-Type", "text/plain"), ("Cache-Control", "max-age=60"), ("Age", "5"),
                    ("Via", "1.1 upstream-cache"), ("Date", "Fri, 15 Jan 2027 08:00:00 GMT"), ("ETag", "\"v1\""),
                ],
                body: Array("same".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let clock = TestClock()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/t")))
        // The first hit takes the general path (and keeps the body); later ones the kept head.
        let hits = try (0..<3).map { _ in try client.request(RawClient.get(origin.url("/t"))) }
        func fields(_ response: ReceivedResponse) -> [String] {
            response.fields.map { "\($0.0.lowercased()): \($0.1)" }.filter { !$0.hasPrefix("age:") }.sorted()
        }
        for hit in hits {
            #expect(hit.text == "same")
            #expect(fields(hit) == fields(hits[0]))
            #expect(hit.headers("age") == ["5"])
            #expect(hit.header("via") == "1.1 upstream-cache, 1.1 sluice")
            #expect(hit.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        }
        // Conditional and HEAD requests still take the general path.
        let conditional = try client.request(RawClient.get(origin.url("/t"), extra: "If-None-Match: \"v1\"\r\n"))
        #expect(conditional.status == 304)
        try client.send("HEAD \(origin.url("/t")) HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.reader.readResponse(method: "HEAD")
        #expect(head.status == 200)
        #expect(head.header("content-length") == "4")
        #expect(origin.requests.count == 1)
    }
}
