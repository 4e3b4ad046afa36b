import Foundation
import Sluice
import SluiceTestKit
import Testing

/// The admin API on its own port, next to a proxy that served real exchanges.
@Suite("The admin API")
struct AdminTests {
    static func request(_ port: UInt16, _ method: String, _ target: String, headers: String = "") throws
        -> ReceivedResponse
    {
        let client = try RawClient(port: port)
        let host = headers.lowercased().contains("host:") ? "" : "Host: 127.0.0.1:\(port)\r\n"
        return try client.request("\(method) \(target) HTTP/1.1\r\n\(host)\(headers)\r\n", method: method)
    }

    static func object(_ response: ReceivedResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    static func origin() throws -> OriginServer {
        try OriginServer { request in
            if request.target == "/down" { return .close }
            if request.target == "/big" {
                return .stream(
                    status: 200,
                    headers: [("Content-Type", "application/octet-stream"), ("Cache-Control", "max-age=60")],
                    total: 3 << 20)
            }
            return .respond(
                status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "max-age=60")],
                body: Array(#"{"path":"\#(request.target)"}"#.utf8))
        }
    }

    @Test("Past the admin port's connection limit a request gets a 503 that says why, not a silent close")
    func connectionLimitSaid() throws {
        let proxy = try ProxyHarness(configuration: Configuration())
        let admin = try proxy.startAdmin()
        let held = try (0..<64).map { _ in try RawClient(port: admin) }
        var refused: ReceivedResponse?
        #expect(
            proxy.waitUntil {
                refused = try? Self.request(admin, "GET", "/health")
                return refused?.status == 503
            }, "\(refused?.status ?? 0)")
        let text = refused?.text ?? ""
        #expect(text.contains("64 connections open"), "\(text)")
        for client in held { client.socket.close() }
        #expect(
            proxy.waitUntil {
                (try? Self.request(admin, "GET", "/health"))?.status == 200
            })
    }

    @Test("health, stats and metrics describe what the proxy did")
    func healthStatsMetrics() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/a")))
        _ = try client.request(RawClient.get(origin.url("/a")))
        _ = try client.request(RawClient.get(origin.url("/down")))
        let health = Self.object(try Self.request(admin, "GET", "/health"))
        #expect(health["status"] as? String == "ok")
        let upstream = try #require(health["upstream"] as? [String: Any])
        #expect(upstream["recent_attempts"] as? Int == 2)
        #expect(upstream["recent_failures"] as? Int == 1)
        #expect((upstream["last_failure"] as? [String: Any])?["error"] as? String != nil)
        let stats = Self.object(try Self.request(admin, "GET", "/stats"))
        #expect(stats["requests"] as? Int == 3)
        #expect((stats["cache"] as? [String: Any])?["hits"] as? Int == 1)
        let metrics = try Self.request(admin, "GET", "/metrics")
        #expect(metrics.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.text.contains("sluice_cache_hits_total 1\n"))
        #expect(metrics.text.contains("sluice_responses_total{class=\"2xx\"} 2\n"))
        #expect(metrics.text.contains("sluice_responses_total{class=\"5xx\"} 1\n"))
        #expect(metrics.text.contains("sluice_cache_lookups_total{outcome=\"hit\"} 1\n"))
        #expect(metrics.text.contains("sluice_requests_total 3\n"))
        #expect(metrics.text.contains("sluice_exchange_duration_seconds_count 3\n"))
        #expect(metrics.text.contains("# TYPE sluice_exchange_duration_seconds histogram"))
        #expect(metrics.text.contains("sluice_upstream_first_byte_seconds_count 1\n"))
        // Every family says what it counts, on the line before its type.
        let lines = metrics.text.split(separator: "\n")
        for (index, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
            let name = line.split(separator: " ")[2]
            #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "\(line)")
        }
        #expect(lines.filter { $0.hasPrefix("# HELP ") }.count == lines.filter { $0.hasPrefix("# TYPE ") }.count)
    }

    @Test(
        "Foreign Host, browser Origin, wrong method and unknown paths are refused, through the proxy too"
    )
    func refusals() throws {
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let rebound = try Self.request(admin, "GET", "/stats", headers: "Host: attacker.example:8081\r\n")
        #expect(rebound.status == 403)
        let cors = try Self.request(admin, "GET", "/stats", headers: "Origin: https://attacker.example\r\n")
        #expect(cors.status == 403)
        // The admin page itself (same origin) may call; a page on another port of localhost may not.
        let own = try Self.request(admin, "POST", "/purge?all", headers: "Origin: http://127.0.0.1:\(admin)\r\n")
        #expect(own.status == 200)
        let neighbour = try Self.request(
            admin, "POST", "/purge?all", headers: "Origin: http://127.0.0.1:\(admin &+ 1)\r\n")
        #expect(neighbour.status == 403)
        // The page and its files, under a strict Content-Security-Policy; every other answer is sandboxed data.
        let page = try Self.request(admin, "GET", "/")
        #expect(page.status == 200 && page.header("content-type") == "text/html; charset=utf-8")
        #expect(page.header("content-security-policy")?.hasPrefix("default-src 'self'; script-src 'self'") == true)
        #expect(!String(decoding: page.body, as: UTF8.self).contains("<script>"), "no inline script")
        #expect(try Self.request(admin, "GET", "/ui/app.js").header("content-type") == "text/javascript; charset=utf-8")
        #expect(try Self.request(admin, "GET", "/ui/app.css").status == 200)
        #expect(
            try Self.request(admin, "GET", "/stats").header("content-security-policy") == "sandbox; default-src 'none'")
        #expect(try Self.request(admin, "GET", "/exchanges/99/body").status == 404)
        let series = Self.object(try Self.request(admin, "GET", "/series?seconds=60"))
        #expect((series["requests"] as? [Int])?.count == 60)
        #expect(try Self.request(admin, "GET", "/nothing").status == 404)
        #expect(try Self.request(admin, "POST", "/stats").status == 405)
        #expect(try Self.request(admin, "GET", "/cache/abc").status == 400)
        #expect(try Self.request(admin, "GET", "/stats", headers: "Host: localhost:1\r\n").status == 200)
        // Connections beyond the limit get a 503 and are closed; the API still answers after they go.
        var idle: [RawClient] = []
        for _ in 0..<70 { idle.append(try RawClient(port: admin)) }
        let over = idle.last!
        #expect((try? over.reader.readResponse())?.status == 503, "the 70th admin connection was not refused")
        #expect(over.isClosedByPeer(), "the 70th admin connection was not closed")
        idle.removeAll()
        #expect(proxy.waitUntil { (try? Self.request(admin, "GET", "/health").status) == 200 })
        // A client on this machine reaches the admin API through the proxy too (a terminal or a
        // browser set to use it), under the same checks; its requests are not the feed's traffic.
        func requestsCounted() throws -> Int {
            (Self.object(try Self.request(admin, "GET", "/series?seconds=600"))["requests"] as? [Int] ?? []).reduce(
                0, +)
        }
        let countedBefore = try requestsCounted()
        let client = try RawClient(port: proxy.port)
        let through = try client.request(RawClient.get("http://127.0.0.1:\(admin)/stats"))
        #expect(through.status == 200 && through.header("cache-control") == "no-store")
        let foreign = try client.request(
            "POST http://127.0.0.1:\(admin)/purge?all HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n"
                + "Origin: http://evil.example\r\nContent-Length: 0\r\n\r\n")
        #expect(foreign.status == 403, "the admin API's own Origin check still applies")
        #expect(try requestsCounted() == countedBefore, "the page's own polling is not shown as traffic")
    }

    @Test(
        "cache endpoints list, show and serve bodies; DELETE and POST /purge take effect at once; the token guards them"
    )
    func cacheEndpoints() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin(token: "s3cret")
        let client = try RawClient(port: proxy.port)
        for path in ["/one", "/two", "/three"] { _ = try client.request(RawClient.get(origin.url(path))) }
        let listed = try Self.request(admin, "GET", "/cache?sort=age&limit=10")
        let entries = try #require((try? JSONSerialization.jsonObject(with: Data(listed.body))) as? [[String: Any]])
        #expect(entries.count == 3)
        let one = try #require(entries.first { $0["url"] as? String == origin.url("/one") })
        let id = try #require(one["id"] as? Int)
        let filtered = try Self.request(admin, "GET", "/cache?url=%2A%2Ftwo")
        #expect(((try? JSONSerialization.jsonObject(with: Data(filtered.body))) as? [Any])?.count == 1)
        let shown = Self.object(try Self.request(admin, "GET", "/cache/\(id)"))
        #expect((shown["headers"] as? [[String]])?.contains(["Content-Type", "application/json"]) == true)
        let body = try Self.request(admin, "GET", "/cache/\(id)/body")
        #expect(body.text == #"{"path":"/one"}"#)
        #expect(body.header("content-type") == "application/json")
        #expect(try Self.request(admin, "GET", "/cache/999999").status == 404)
        // A large body streams out chunk by chunk, whole.
        let big = try client.request(RawClient.get(origin.url("/big")))
        let bigID = try #require(
            ((try? JSONSerialization.jsonObject(
                with: Data(try Self.request(admin, "GET", "/cache?url=%2A%2Fbig").body))) as? [[String: Any]])?
                .first?["id"] as? Int)
        let streamed = try Self.request(admin, "GET", "/cache/\(bigID)/body")
        #expect(streamed.body.count == 3 << 20)
        #expect(streamed.body == big.body)
        #expect(try Self.request(admin, "HEAD", "/cache/\(bigID)/body").header("content-length") == String(3 << 20))
        // A reader that is slow to start still gets every byte (the answer outlives its handler).
        let slow = try RawClient(port: admin)
        try slow.send("GET /cache/\(bigID)/body HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        // Kept: the passing of time with nothing read is what this checks (no condition to wait on).
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try slow.reader.readResponse().body == big.body)

        #expect(try Self.request(admin, "DELETE", "/cache/\(id)").status == 401)
        let deleted = try Self.request(admin, "DELETE", "/cache/\(id)", headers: "Authorization: Bearer s3cret\r\n")
        #expect(Self.object(deleted)["purged"] as? Int == 1)
        let after = try client.request(RawClient.get(origin.url("/one")))
        #expect(after.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        let bad = try Self.request(admin, "POST", "/purge", headers: "Authorization: Bearer s3cret\r\n")
        #expect(bad.status == 400)
        let purged = try Self.request(
            admin, "POST", "/purge?all", headers: "Authorization: Bearer s3cret\r\nContent-Length: 2\r\n\r\n{}")
        #expect(Self.object(purged)["purged"] as? Int == 4)
    }

    @Test("A watched exchange still running: start, then at most four progress events a second with its byte counts")
    func progressEvents() throws {
        // 40 pieces of 16 KiB, 50 ms apart: two seconds of download with a known length.
        let origin = try OriginServer { _ in
            .paced(
                status: 200, headers: [("Cache-Control", "no-store")],
                pieces: Array(repeating: [UInt8](repeating: 0x61, count: 16 * 1024), count: 40), interval: 0.05,
                declared: nil)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let watcher = try RawClient(port: admin)
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try watcher.reader.readHead()
        // (Subscribed in the loop turn that wrote the head just read.)
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/slow")))
        var kinds: [String] = []
        var downs: [Int] = []
        var times: [Double] = []
        var kind = ""
        while kinds.last != "exchange" {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            guard line.hasPrefix("data: ") else { continue }
            kinds.append(kind)
            let event = try #require(
                (try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8))) as? [String: Any])
            #expect(event["id"] as? Int == 1)
            if kind == "progress" {
                downs.append(event["down"] as? Int ?? -1)
                times.append(Date().timeIntervalSince1970)
                #expect(event["down_total"] as? Int == 40 * 16 * 1024)
            }
        }
        #expect(kinds.first == "start")
        #expect(downs.count >= 3, "progress was reported while the body moved: \(kinds)")
        #expect(downs == downs.sorted() && Set(downs).count == downs.count, "each reports more bytes")
        if let first = times.first, let last = times.last, downs.count > 1 {
            #expect(Double(downs.count - 1) / max(last - first, 0.001) <= 5, "at most about four a second")
        }
        _ = try client.reader.readResponse(method: "GET")
    }

    @Test("Errors are problems (RFC 9457) that still carry error; a 405 says what is allowed")
    func errorsAreProblems() throws {
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let wrong = try RawClient(port: admin).request(
            "POST /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", method: "POST")
        #expect(wrong.status == 405 && wrong.header("allow") == "GET, HEAD")
        #expect(wrong.header("content-type") == "application/problem+json")
        let problem = try #require(try JSONSerialization.jsonObject(with: Data(wrong.body)) as? [String: Any])
        #expect(problem["status"] as? Int == 405 && problem["title"] as? String == "Method Not Allowed")
        #expect((problem["detail"] as? String) == (problem["error"] as? String) && problem["detail"] != nil)
        let missing = try RawClient(port: admin).request("GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(missing.status == 404 && missing.header("content-type") == "application/problem+json")
        let purge = try RawClient(port: admin).request("GET /purge HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(purge.status == 405 && purge.header("allow") == "POST")
    }

    @Test("A request that trickles in gets a 408 at its deadline, however often a byte comes (slowloris)")
    func trickleHasADeadline() throws {
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        // (The reader waits past the 10 s deadline: its own default timeout is that long.)
        let client = try RawClient(port: admin, timeout: 20)
        let start = Date()
        try client.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        // A byte every 2 s: each restarts the read timeout (10 s), never the deadline.
        nonisolated(unsafe) let trickling = client
        let trickle = Thread {
            for _ in 0..<8 {
                Thread.sleep(forTimeInterval: 2)
                guard (try? trickling.send("X")) != nil else { return }
            }
        }
        trickle.start()
        let answer = try client.reader.readResponse(method: "GET")
        let waited = Date().timeIntervalSince(start)
        #expect(answer.status == 408 && answer.header("content-type") == "application/problem+json")
        #expect(waited > 9 && waited < 13, "answered after \(waited) s")
    }

    @Test("GET /events first lists the exchanges that completed before it was opened (the last 200)")
    func eventsBeforeOpening() throws {
        // Given two exchanges made while nobody watched
        let origin = try Self.origin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let client = try RawClient(port: proxy.port)
        for path in ["/earlier-1", "/earlier-2"] { _ = try client.request(RawClient.get(origin.url(path))) }
        #expect(proxy.waitUntil { proxy.stats.responses >= 2 })

        // When the page opens the event stream
        let watcher = try RawClient(port: admin)
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try #require(try watcher.reader.readHead())
        var urls: [String] = []
        var kind = ""
        for _ in 0..<20 where urls.count < 2 {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            if line.hasPrefix("data: "), kind == "exchange",
                let event = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
            {
                urls.append(event["url"] as? String ?? "")
            }
        }

        // Then both come first, oldest first, without bodies kept for them
        #expect(urls == [origin.url("/earlier-1"), origin.url("/earlier-2")])
    }

    @Test("GET /events streams one event per completed exchange")
    func events() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let watcher = try RawClient(port: admin)
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let head = try #require(try watcher.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        #expect(head.fields.contains { $0.0.lowercased() == "content-type" && $0.1 == "text/event-stream" })
        #expect(proxy.waitUntil { proxy.onLoop { $0.session.eventMonitor.monitors.count } >= 2 })
        let client = try RawClient(port: proxy.port)
        _ = try client.request(RawClient.get(origin.url("/watched")))
        // `start` (and maybe `progress`) come first; the `exchange` event is the completed one.
        var data: String?
        var kind = ""
        for _ in 0..<30 where data == nil {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            if line.hasPrefix("data: "), kind == "exchange" { data = String(line.dropFirst(6)) }
        }
        let event = try #require(
            (try? JSONSerialization.jsonObject(with: Data((data ?? "").utf8))) as? [String: Any])
        #expect(event["url"] as? String == origin.url("/watched"))
        #expect(event["status"] as? Int == 200)
        #expect(event["http_version"] as? String == "HTTP/1.1")
        #expect(event["cache_status"] as? String == "Sluice; fwd=uri-miss; stored")
        #expect(event["validation"] as? String == "passed")
        #expect(event["duration_ms"] as? Double != nil)
        // Watched, it carries what the page shows: its number, the header fields both ways, and
        // its body is kept for the page.
        let id = try #require(event["id"] as? Int)
        let requestFields = try #require(event["request_headers"] as? [[String]])
        #expect(requestFields.contains { $0.first?.lowercased() == "host" })
        let responseFields = try #require(event["response_headers"] as? [[String]])
        #expect(responseFields.contains { $0 == ["Cache-Status", "Sluice; fwd=uri-miss; stored"] })
        let body = try RawClient(port: admin).request("GET /exchanges/\(id)/body HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(body.status == 200 && body.body == Array(#"{"path":"/watched"}"#.utf8))
        #expect(body.header("content-security-policy") == "sandbox; default-src 'none'")
        let timeline = try #require(event["timeline"] as? [String: Any])
        for phase in ["queued_ms", "dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "complete_ms"] {
            #expect((timeline[phase] as? Double ?? -1) >= 0, "\(phase)")
        }
        #expect((timeline["first_byte_ms"] as? Double ?? 0) <= (timeline["complete_ms"] as? Double ?? 0))
        #expect(proxy.logLines.all.contains { $0.contains("timeline=queued:") && $0.contains(",ttfb:") })
    }
}
