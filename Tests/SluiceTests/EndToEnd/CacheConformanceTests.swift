import Foundation
import SluiceTestKit
import Synchronization
import Testing

@testable import Sluice

/// RFC 9111 points checked through a real proxy and origin: what is reused, what goes upstream.
@Suite("Cache conformance (RFC 9111)")
struct CacheConformanceTests {
    /// An IMF-fixdate `offset` seconds from now.
    static func date(_ offset: Int = 0) -> String { HTTPDate.format(Int(Date().timeIntervalSince1970) + offset) }

    /// An origin that numbers its answers per path, with the headers `headers(path)` gives.
    static func numberedOrigin(
        status: @escaping @Sendable (String) -> Int = { _ in 200 },
        headers: @escaping @Sendable (String) -> [(String, String)]
    ) throws -> OriginServer {
        let counter = Mutex(0)
        return try OriginServer { request in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            if request.method != "GET" && request.method != "HEAD" { return .text("changed by \(request.method)") }
            return .respond(
                status: status(request.target), headers: [("Content-Type", "text/plain")] + headers(request.target),
                body: Array("answer \(n)".utf8))
        }
    }

    @Test("Expires that is not one valid HTTP-date (another zone, two lines, a one-digit hour) is already expired")
    func invalidExpires() throws {
        let origin = try Self.numberedOrigin { path in
            let valid = Self.date(3600)
            let expires: [(String, String)] =
                switch path {
                case "/valid": [("Expires", valid)]
                case "/utc": [("Expires", valid.replacingOccurrences(of: "GMT", with: "UTC"))]
                case "/two-lines": [("Expires", valid), ("Expires", valid)]
                case "/no-comma": [("Expires", valid.replacingOccurrences(of: ",", with: ""))]
                default: [("Expires", "0")]
                }
            return [("Date", Self.date())] + expires
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for path in ["/valid", "/utc", "/two-lines", "/no-comma", "/zero"] {
            _ = try client.request(RawClient.get(origin.url(path)))
            let second = try client.request(RawClient.get(origin.url(path)))
            let reused = second.header("cache-status")?.hasPrefix("Sluice; hit") == true
            #expect(reused == (path == "/valid"), "\(path): \(second.header("cache-status") ?? "-")")
        }
        #expect(origin.requests.count == 9)
    }

    @Test("Age sent as a list counts by its first value")
    func ageList() throws {
        let origin = try Self.numberedOrigin { path in
            [("Date", Self.date()), ("Cache-Control", "max-age=3600"), ("Age", path == "/old" ? "7200, 0" : "0, 7200")]
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for path in ["/old", "/young"] {
            _ = try client.request(RawClient.get(origin.url(path)))
            _ = try client.request(RawClient.get(origin.url(path)))
        }
        #expect(origin.requests.filter { $0.target == "/old" }.count == 2)
        #expect(origin.requests.filter { $0.target == "/young" }.count == 1)
    }

    @Test("Errors with explicit freshness are stored and reused, and revalidated when stale; without it they are not")
    func errorStatuses() throws {
        let clock = TestClock()
        let origin = try Self.numberedOrigin(status: { path in Int(path.dropFirst().prefix(3)) ?? 200 }) { path in
            path.hasSuffix("fresh") ? [("Cache-Control", "max-age=60"), ("ETag", "\"e\"")] : [("ETag", "\"e\"")]
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        for status in [404, 410, 500, 503, 599] {
            let first = try client.request(RawClient.get(origin.url("/\(status)-fresh")))
            let second = try client.request(RawClient.get(origin.url("/\(status)-fresh")))
            #expect(first.status == status && second.status == status)
            #expect(second.text == first.text, "\(status)")
            #expect(second.header("cache-status")?.hasPrefix("Sluice; hit") == true, "\(status)")
        }
        #expect(origin.requests.count == 5)
        // Stale: revalidated with the stored validator.
        clock.advance(61)
        _ = try client.request(RawClient.get(origin.url("/500-fresh")))
        #expect(origin.requests.last?.header("if-none-match") == "\"e\"")
        // A 500 with only a validator is not stored (not heuristically cacheable).
        _ = try client.request(RawClient.get(origin.url("/500-plain")))
        _ = try client.request(RawClient.get(origin.url("/500-plain")))
        #expect(origin.requests.filter { $0.target == "/500-plain" }.count == 2)
    }

    /// An origin whose representation is the request's `X-Version` ("a" by default), with
    /// `control`, and that answers `If-None-Match: "a"` with a 304 about another one ("b").
    static func switchingOrigin(control: String) throws -> OriginServer {
        try OriginServer { request in
            if request.header("if-none-match") == "\"a\"" {
                return .respond(status: 304, headers: [("ETag", "\"b\"")], body: [])
            }
            let version = request.header("x-version") ?? "a"
            return .respond(
                status: 200, headers: [("ETag", "\"\(version)\""), ("Cache-Control", control)],
                body: Array("content \(version)".utf8))
        }
    }

    /// A proxy on a test clock with `/r` stored from `origin`, then 61 s later: stale.
    static func staleEntry(_ origin: OriginServer) throws -> (ProxyHarness, RawClient) {
        let clock = TestClock()
        let proxy = try ProxyHarness()
        clock.install(on: proxy)
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/r"))).text == "content a")
        clock.advance(61)
        return (proxy, client)
    }

    @Test("A 304 about another representation updates nothing: the request goes again without conditions")
    func notModifiedForAnotherRepresentation() throws {
        let origin = try Self.switchingOrigin(control: "max-age=60")
        defer { origin.stop() }
        let (proxy, client) = try Self.staleEntry(origin)
        defer { withExtendedLifetime(proxy) {} }
        let again = try client.request(RawClient.get(origin.url("/r"), extra: "X-Version: b\r\n"))
        #expect(again.status == 200 && again.text == "content b" && again.header("etag") == "\"b\"", "\(again.text)")
        #expect(origin.requests.map { $0.header("if-none-match") } == [nil, "\"a\"", nil])
        // What the second fetch stored is what is served next.
        let hit = try client.request(RawClient.get(origin.url("/r")))
        #expect(hit.text == "content b" && hit.header("cache-status")?.hasPrefix("Sluice; hit") == true)
    }

    @Test("A background refresh answered by a 304 about another representation asks again plainly and stores that")
    func backgroundNotModifiedForAnotherRepresentation() throws {
        let origin = try Self.switchingOrigin(control: "max-age=60, stale-while-revalidate=30")
        defer { origin.stop() }
        let (proxy, client) = try Self.staleEntry(origin)
        defer { withExtendedLifetime(proxy) {} }
        // Stale within stale-while-revalidate: served at once, refreshed behind the client's back.
        let stale = try client.request(RawClient.get(origin.url("/r"), extra: "X-Version: b\r\n"))
        #expect(stale.text == "content a")
        #expect(eventually { origin.requests.count == 3 }, "the refresh asked again without conditions")
        #expect(origin.requests.map { $0.header("if-none-match") } == [nil, "\"a\"", nil])
        #expect(
            eventually { (try? client.request(RawClient.get(origin.url("/r"))).text) == "content b" },
            "what the plain request got replaced the entry")
    }

    @Test(
        "A response without Date, or with one that is not a date, is dated on arrival: its heuristic freshness and Expires count from then"
    )
    func missingDate() throws {
        let origin = try OriginServer { request in
            switch request.target {
            case "/modified":
                .respond(
                    status: 200, headers: [("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")], body: Array("m".utf8))
            case "/garbage":
                .respond(
                    status: 200, headers: [("Date", "garbage"), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")],
                    body: Array("g".utf8))
            default:
                .respond(
                    status: 200, headers: [("Expires", HTTPDate.format(time(nil) + 600))], body: Array("e".utf8))
            }
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        // A Date that is not one is replaced by the time of arrival in what is stored, likewise.
        for path in ["/modified", "/expires", "/garbage"] {
            let first = try client.request(RawClient.get(origin.url(path)))
            let second = try client.request(RawClient.get(origin.url(path)))
            #expect(first.header("date") != nil, "\(path): the client's copy is dated")
            #expect(
                second.header("cache-status")?.hasPrefix("Sluice; hit") == true,
                "\(path): \(second.header("cache-status") ?? "")")
        }
        #expect(origin.requests.count == 3)
    }

    @Test("A non-error response to a method not known to be safe invalidates the URI and its Location (§4.4)")
    func unknownMethodsInvalidate() throws {
        let origin = try Self.numberedOrigin { _ in [("Cache-Control", "max-age=600")] }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for method in ["FOO", "M-SEARCH", "PATCH", "OPTIONS"] {
            let first = try client.request(RawClient.get(origin.url("/r")))
            let host = "Host: 127.0.0.1:\(origin.port)\r\n"
            let changed = try client.request(
                "\(method) \(origin.url("/r")) HTTP/1.1\r\n\(host)Content-Length: 0\r\n\r\n")
            #expect(changed.status == 200, "\(method)")
            let after = try client.request(RawClient.get(origin.url("/r")))
            // OPTIONS is safe: it changes nothing, so the stored answer stays.
            #expect((after.text == first.text) == (method == "OPTIONS"), "\(method): \(after.text)")
        }
    }

    @Test("Relative Location and Content-Location values are resolved against the target to invalidate (§4.4)")
    func relativeLocationsInvalidate() throws {
        let counter = Mutex(0)
        let origin = try OriginServer { request in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            guard request.method == "POST" else {
                return .respond(
                    status: 200, headers: [("Cache-Control", "max-age=600")], body: Array("answer \(n)".utf8))
            }
            // The POST's answer names what the request asks it to.
            let named = ["Location", "Content-Location"].compactMap { name in
                request.header("x-answer-" + name.lowercased()).map { (name, $0) }
            }
            return .respond(status: 200, headers: named, body: Array("changed".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let host = "Host: 127.0.0.1:\(origin.port)\r\n"
        for (field, value, invalidated) in [
            ("Location", "b", "/t/b"), ("Content-Location", "./c?x=1", "/t/c?x=1"), ("Location", "../d#f", "/d"),
            ("Content-Location", "//127.0.0.1:\(origin.port)/t/e", "/t/e"),
        ] {
            let first = try client.request(RawClient.get(origin.url(invalidated)))
            #expect(try client.request(RawClient.get(origin.url(invalidated))).text == first.text)
            let post = try client.request(
                "POST \(origin.url("/t/a")) HTTP/1.1\r\n\(host)X-Answer-\(field): \(value)\r\nContent-Length: 0\r\n\r\n"
            )
            #expect(post.status == 200)
            #expect(try client.request(RawClient.get(origin.url(invalidated))).text != first.text, "\(field): \(value)")
        }
    }

    @Test("Proxy-Authentication-Info is for the client that chose the proxy: never stored (§3.1)")
    func proxyAuthenticationInfoNotStored() throws {
        let origin = try Self.numberedOrigin { _ in
            [("Cache-Control", "max-age=600"), ("Proxy-Authentication-Info", "nextnonce=\"abc\"")]
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/p")))
        let hit = try client.request(RawClient.get(origin.url("/p")))
        #expect(hit.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        #expect(hit.header("proxy-authentication-info") == nil)
    }

    @Test("A 205 reaches the client without content, whatever the origin sent")
    func resetContent() throws {
        let origin = try OriginServer { _ in
            .respond(status: 205, headers: [("Content-Type", "text/plain")], body: Array("not allowed".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/form")))
        #expect(response.status == 205)
        #expect(response.body.isEmpty)
        #expect(response.header("content-length") == "0")
        // The connection is still in step: the next response is read whole.
        let next = try client.request(RawClient.get(origin.url("/form")))
        #expect(next.status == 205)
    }

    @Test("If-Modified-Since against a fresh entry: Last-Modified, else Date; an invalid one is ignored")
    func conditionalAgainstDate() throws {
        let origin = try Self.numberedOrigin { path in
            [("Date", "Thu, 18 Aug 2050 02:01:18 GMT"), ("Cache-Control", "max-age=600")]
                + (path == "/lm" ? [("Last-Modified", "Wed, 17 Aug 2050 02:01:18 GMT")] : [])
        }
        defer { origin.stop() }
        // The proxy's clock (TestClock: 2027) is before the origin's Date: the entries stay fresh.
        let proxy = try ProxyHarness()
        TestClock().install(on: proxy)
        let client = try RawClient(port: proxy.port)
        for path in ["/lm", "/date"] { _ = try client.request(RawClient.get(origin.url(path))) }
        func status(_ path: String, since: String) throws -> Int {
            try client.request(RawClient.get(origin.url(path), extra: "If-Modified-Since: \(since)\r\n")).status
        }
        #expect(try status("/lm", since: "Wed, 17 Aug 2050 12:00:00 GMT") == 304)
        #expect(try status("/lm", since: "Tue, 16 Aug 2050 12:00:00 GMT") == 200)
        #expect(try status("/date", since: "Thu, 18 Aug 2050 02:01:18 GMT") == 304)
        #expect(try status("/date", since: "Wed, 17 Aug 2050 12:00:00 GMT") == 200)
        #expect(try status("/date", since: "Thu, 18 Aug 2050 02:01:18 UTC") == 200)
        #expect(origin.requests.count == 2)
    }

    @Test("Ranges of a stored response are answered from the file: 206 with Content-Range, 416, If-Range")
    func rangesFromStore() throws {
        // 200 KiB: several stored chunks, so ranges cross chunk boundaries; and 2 KiB, kept in memory.
        let large = (0..<(200 * 1024)).map { UInt8(truncatingIfNeeded: $0 % 253) }
        let small = Array(large[0..<2048])
        let origin = try OriginServer { request in
            .respond(
                status: 200,
                headers: [
                    ("Cache-Control", "max-age=600"), ("ETag", "\"r1\""), ("Content-Type", "application/octet-stream"),
                ],
                body: request.target == "/large" ? large : small)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for (path, body) in [("/large", large), ("/small", small)] {
            #expect(try client.request(RawClient.get(origin.url(path))).body == body)
            let size = body.count
            for (range, first, last) in [
                ("bytes=0-99", 0, 99), ("bytes=65000-140000", 65000, 140_000), ("bytes=-100", size - 100, size - 1),
                ("bytes=1000-", 1000, size - 1), ("bytes=100-999999", 100, size - 1),
            ] {
                let lastByte = min(last, size - 1)
                guard first < size else { continue }
                let response = try client.request(RawClient.get(origin.url(path), extra: "Range: \(range)\r\n"))
                #expect(response.status == 206, "\(path) \(range)")
                #expect(response.header("content-range") == "bytes \(first)-\(lastByte)/\(size)", "\(path) \(range)")
                #expect(response.body == Array(body[first...lastByte]), "\(path) \(range)")
                #expect(response.header("cache-status")?.hasPrefix("Sluice; hit") == true)
            }
            let unsatisfiable = try client.request(
                RawClient.get(origin.url(path), extra: "Range: bytes=\(size)-\r\n"))
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.header("content-range") == "bytes */\(size)")
            #expect(unsatisfiable.body.isEmpty)
            let matching = try client.request(
                RawClient.get(origin.url(path), extra: "Range: bytes=0-9\r\nIf-Range: \"r1\"\r\n"))
            #expect(matching.status == 206 && matching.body == Array(body[0...9]))
            let changed = try client.request(
                RawClient.get(origin.url(path), extra: "Range: bytes=0-9\r\nIf-Range: \"r0\"\r\n"))
            #expect(changed.status == 200 && changed.body == body)
            let several = try client.request(RawClient.get(origin.url(path), extra: "Range: bytes=0-1,5-6\r\n"))
            #expect(several.status == 200 && several.body == body)
        }
        #expect(origin.requests.count == 2)
    }

    @Test("206 pieces are stored, answer the ranges they hold, combine, and become the complete response")
    func piecesCombine() throws {
        let body = (0..<(300 * 1000)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        // Ranges like a file server: `first-last` or `first-`; the ETag names the path's version.
        let origin = try OriginServer { request in
            let etag = request.target == "/changing" ? "\"v\(request.header("range") ?? "")\"" : "\"p1\""
            var headers = [("Cache-Control", "max-age=600"), ("ETag", etag)]
            // A field only the first piece has, and one each piece says anew.
            if request.header("range") == "bytes=0-99999" { headers.append(("X-Keep", "k")) }
            headers.append(("X-Piece", request.header("range") ?? "whole"))
            guard let range = request.header("range"), range.hasPrefix("bytes=") else {
                return .respond(status: 200, headers: headers, body: body)
            }
            let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            let first = Int(bounds[0])!
            let last = bounds[1].isEmpty ? body.count - 1 : min(Int(bounds[1])!, body.count - 1)
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(body.count)"))
            if request.target == "/liar" {  // names 1000 bytes, sends 10
                return .respond(status: 206, headers: headers, body: Array(body[first..<(first + 10)]))
            }
            return .respond(status: 206, headers: headers, body: Array(body[first...last]))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        func get(_ path: String, _ range: String?) throws -> ReceivedResponse {
            try client.request(RawClient.get(origin.url(path), extra: range.map { "Range: bytes=\($0)\r\n" } ?? ""))
        }
        func expectPiece(_ response: ReceivedResponse, _ first: Int, _ last: Int, hit: Bool) {
            #expect(response.status == 206)
            #expect(response.header("content-range") == "bytes \(first)-\(last)/\(body.count)")
            #expect(response.body == Array(body[first...last]))
            #expect(response.header("cache-status")?.contains("hit") == hit, "\(response.header("cache-status") ?? "")")
        }
        expectPiece(try get("/file", "0-99999"), 0, 99999, hit: false)
        expectPiece(try get("/file", "1000-1999"), 1000, 1999, hit: true)
        expectPiece(try get("/file", "0-99999"), 0, 99999, hit: true)
        expectPiece(try get("/file", "90000-100001"), 90000, 100_001, hit: false)  // two bytes it lacks
        #expect(origin.requests.count == 2)
        // The second piece overlapped the first: together they hold 0-100001, across the join.
        expectPiece(try get("/file", "99990-100001"), 99990, 100_001, hit: true)
        expectPiece(try get("/file", "100002-199999"), 100_002, 199_999, hit: false)  // touches: combined
        expectPiece(try get("/file", "50000-150000"), 50000, 150_000, hit: true)
        #expect(origin.requests.count == 3)
        // The last piece completes the representation: a complete 200 from then on.
        expectPiece(try get("/file", "200000-"), 200_000, body.count - 1, hit: false)
        let whole = try get("/file", nil)
        #expect(whole.status == 200 && whole.body == body)
        // Combined pieces keep the older one's fields the newer lacks, the newer's win (§3.4).
        #expect(whole.header("x-keep") == "k" && whole.header("x-piece") == "bytes=200000-")
        #expect(whole.header("content-length") == String(body.count) && whole.header("content-range") == nil)
        #expect(whole.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        expectPiece(try get("/file", "-100"), body.count - 100, body.count - 1, hit: true)
        #expect(origin.requests.count == 4)

        // Pieces of different representations (another ETag each time) are never combined.
        expectPiece(try get("/changing", "0-9"), 0, 9, hit: false)
        expectPiece(try get("/changing", "10-19"), 10, 19, hit: false)
        expectPiece(try get("/changing", "10-19"), 10, 19, hit: true)
        expectPiece(try get("/changing", "5-15"), 5, 15, hit: false)
        // A 206 whose body is not the bytes its Content-Range names is never stored.
        let lie = try get("/liar", "0-999")
        #expect(lie.body.count == 10)
        _ = try? get("/liar", "0-999")
        #expect(origin.requests.filter { $0.target == "/liar" }.count == 2)
        // An unsafe method drops the pieces with the rest.
        _ = try client.request(
            "DELETE \(origin.url("/changing")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 0\r\n\r\n")
        expectPiece(try get("/changing", "5-15"), 5, 15, hit: false)
    }

    @Test("A POST response with explicit freshness and Content-Location equal to its target answers later GETs")
    func postWithContentLocation() throws {
        let origin = try OriginServer { request in
            if request.method == "POST" {
                let location = request.target == "/self" ? "/self" : "/elsewhere"
                return .respond(
                    status: 200,
                    headers: [("Cache-Control", "max-age=60"), ("Content-Location", location)],
                    body: Array("posted to \(request.target)".utf8))
            }
            return .respond(status: 200, headers: [("Cache-Control", "max-age=60")], body: Array("got".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        func post(_ path: String) throws -> ReceivedResponse {
            try client.request(
                "POST \(origin.url(path)) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 1\r\n\r\nx")
        }
        #expect(try post("/self").text == "posted to /self")
        let reused = try client.request(RawClient.get(origin.url("/self")))
        #expect(reused.text == "posted to /self")
        #expect(reused.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        // Content-Location naming another URI: nothing stored for the target.
        #expect(try post("/other").text == "posted to /other")
        #expect(try client.request(RawClient.get(origin.url("/other"))).text == "got")
        #expect(origin.requests.map(\.method) == ["POST", "POST", "GET"])
    }

    @Test("cache.store_set_cookie stores a response that sets a cookie, with its Set-Cookie")
    func storeSetCookie() throws {
        let origin = try Self.numberedOrigin { _ in [("Cache-Control", "max-age=60"), ("Set-Cookie", "id=1")] }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.cache.storeSetCookie = true
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/c")))
        let hit = try client.request(RawClient.get(origin.url("/c")))
        #expect(hit.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        #expect(hit.header("set-cookie") == "id=1")
        #expect(origin.requests.count == 1)
    }
}
