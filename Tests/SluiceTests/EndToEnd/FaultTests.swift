import Foundation
import Sluice
import SluiceTestKit
import Testing

@testable import Sluice

@Suite("Failures on demand: a rule's faults")
struct FaultTests {
    static func proxy(_ yaml: String) throws -> ProxyHarness {
        try ProxyHarness(configuration: try ConfigLoader.load(yaml: yaml))
    }

    static func admin(_ port: UInt16, _ method: String, _ target: String, token: String = "") throws
        -> ReceivedResponse
    {
        let client = try RawClient(port: port)
        let authorization = token.isEmpty ? "" : "Authorization: Bearer \(token)\r\n"
        return try client.request(
            "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(authorization)\r\n", method: method)
    }

    static func json(_ response: ReceivedResponse) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(response.body))
    }

    @Test("Draws are reproducible with a seed and near their rates")
    func draws() {
        var faults = Faults()
        faults.status = Faults.Status(code: 503, rate: 0.2)
        faults.reset = Faults.Reset(rate: 0.1, afterBytes: 10)
        faults.latency = 200...800
        var first = FaultDice(seed: 42)
        var second = FaultDice(seed: 42)
        let plans = (0..<2000).map { _ in FaultPlan.draw(faults, using: &first) }
        #expect(plans == (0..<2000).map { _ in FaultPlan.draw(faults, using: &second) })
        let statuses = plans.filter { $0.status != nil }.count
        let resets = plans.filter { $0.resetAfter != nil }.count
        #expect((320...480).contains(statuses))
        // A reset is drawn only for requests that got no status: 10 % of the other 80 %.
        #expect((110...210).contains(resets))
        #expect(plans.allSatisfy { (200...800).contains($0.delayMilliseconds) })
        var other = FaultDice(seed: 43)
        #expect(plans.prefix(50) != (0..<50).map { _ in FaultPlan.draw(faults, using: &other) }[...])
    }

    @Test("An injected status is a real response with Retry-After and a problem that says so; counted")
    func injectedStatus() throws {
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: flaky
                match: { path: "/api/**" }
                faults: { status: { code: 503, retry_after: 5, rate: 1 } }
            """)
        let admin = try proxy.startAdmin()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/api/orders")))
        #expect(response.status == 503)
        #expect(response.header("retry-after") == "5")
        #expect(response.header("content-type") == "application/problem+json")
        let problem = try #require(Self.json(response) as? [String: Any])
        #expect(problem["type"] as? String == "https://sluice.dev/problems/injected-fault")
        #expect(problem["injected"] as? Bool == true && problem["rule"] as? String == "flaky")
        #expect(origin.requests.isEmpty)
        // The connection goes on, and other paths are untouched.
        #expect(try client.request(RawClient.get(origin.url("/other"))).text == "origin")
        let stats = try #require(Self.json(try Self.admin(admin, "GET", "/stats")) as? [String: Any])
        let faults = try #require(stats["faults"] as? [String: [String: Int]])
        #expect(faults["flaky"]?["status"] == 1)
        let metrics = try Self.admin(admin, "GET", "/metrics").text
        #expect(
            metrics.contains(#"sluice_faults_injected_total{kind="status",rule="flaky"} 1"#)
                || metrics.contains(#"sluice_faults_injected_total{rule="flaky",kind="status"} 1"#))
        #expect(proxy.logLines.all.contains { $0.contains("fault=\"status 503\"") })
    }

    @Test("Latency delays the answer by a drawn time in its range, hits included")
    func latency() throws {
        let origin = try OriginServer { _ in .text("cached", headers: [("Cache-Control", "max-age=60")]) }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: slow
                match: { path: "/slow" }
                faults: { latency: "250ms..400ms" }
            """)
        let client = try RawClient(port: proxy.port)
        for _ in 0..<2 {
            let start = Date()
            #expect(try client.request(RawClient.get(origin.url("/slow"))).text == "cached")
            let elapsed = Date().timeIntervalSince(start)
            #expect(elapsed >= 0.24 && elapsed < 3)
        }
        #expect(origin.requests.count == 1)  // the second was a hit, delayed all the same
    }

    @Test("A reset cuts the connection after the configured body bytes")
    func reset() throws {
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 256 * 1024)
        let origin = try OriginServer { _ in .respond(status: 200, headers: [], body: body) }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: cut
                match: { path: "/big" }
                faults: { reset: { rate: 1, after_bytes: 1KiB } }
            """)
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/big")))
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.contains("200"))
        var received = 0
        do {
            received = try client.reader.readToEnd().count
        } catch {
            // ECONNRESET: the reset, as wanted.
        }
        #expect(received <= 1024)
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("reset after 1024 bytes") } })
    }

    @Test("A reset inside a body a stage held (null stripping) cuts it there; the next exchange is served")
    func resetAfterHeldBody() throws {
        let json = "{\"pad\":\"" + String(repeating: "x", count: 200 * 1024) + "\",\"n\":null}"
        let origin = try OriginServer { _ in
            .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(json.utf8))
        }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: cut
                match: { path: "/json" }
                strip_json_nulls: true
                faults: { reset: { rate: 1, after_bytes: 100 } }
            """)
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/json")))
        var received = 0
        do {
            _ = try #require(try client.reader.readHead())
            received = try client.reader.readToEnd().count
        } catch {
            // ECONNRESET: the reset, as wanted.
        }
        #expect(received <= 100)
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("reset after 100 bytes") } })
        let next = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/other")))
        #expect(next.status == 200 && next.body.count == json.utf8.count)
        #expect(proxy.waitUntil { proxy.onLoop { $0.environment.heldBodies.used } == 0 })
    }

    @Test("A held request gets the upstream timeout's 504, or nothing when the client gives up first")
    func timeout() throws {
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            timeouts: { upstream_response: 400ms }
            rules:
              - name: hang
                match: { path: "/hang" }
                faults: { timeout: { rate: 1 } }
            """)
        let client = try RawClient(port: proxy.port)
        let start = Date()
        let response = try client.request(RawClient.get(origin.url("/hang")))
        #expect(response.status == 504)
        #expect(Date().timeIntervalSince(start) >= 0.38)
        #expect(response.text.contains("faults.timeout"))
        // A client that gives up first: the exchange ends with it.
        let impatient = try RawClient(port: proxy.port)
        try impatient.send(RawClient.get(origin.url("/hang")))
        impatient.socket.close()
        #expect(proxy.waitUntil { proxy.stats.connectionsOpen == 1 })
        #expect(origin.requests.isEmpty)
    }

    @Test("Bandwidth sends responses at the set rate, fetched and stored ones alike")
    func bandwidth() throws {
        let body = [UInt8](repeating: UInt8(ascii: "b"), count: 120 * 1024)
        let origin = try OriginServer { _ in
            .respond(status: 200, headers: [("Cache-Control", "max-age=60")], body: body)
        }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: 2g
                match: { path: "/shaped" }
                faults: { bandwidth: 2mbit }
            """)
        let client = try RawClient(port: proxy.port)
        // 120 KiB at 250 000 bytes a second: about half a second, fetched (a miss) or stored (a hit).
        for _ in 0..<2 {
            let start = Date()
            let response = try client.request(RawClient.get(origin.url("/shaped")))
            let elapsed = Date().timeIntervalSince(start)
            #expect(response.body == body)
            #expect(elapsed >= 0.4 && elapsed < 3, "took \(elapsed) s")
        }
        let start = Date()
        #expect(try client.request(RawClient.get(origin.url("/plain"))).body == body)
        #expect(Date().timeIntervalSince(start) < 0.3)
        #expect(origin.requests.count == 2)
    }

    @Test("Bandwidth paces request bodies too: the origin gets the whole upload, at the rate")
    func bandwidthUpload() throws {
        let origin = try OriginServer { request in .text("got \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: uplink
                match: { path: "/upload" }
                faults: { bandwidth: 2mbit }
            """)
        let client = try RawClient(port: proxy.port)
        let upload = String(repeating: "u", count: 120 * 1024)
        let start = Date()
        let response = try client.request(
            "POST \(origin.url("/upload")) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(upload.utf8.count)\r\n\r\n"
                + upload)
        let elapsed = Date().timeIntervalSince(start)
        #expect(response.text == "got \(120 * 1024)")
        #expect(elapsed >= 0.4 && elapsed < 3, "took \(elapsed) s")
    }

    @Test("The same seed gives the same faults to the same requests in two runs")
    func seeded() throws {
        let origin = try OriginServer { _ in .text("ok") }
        defer { origin.stop() }
        func run() throws -> [Int] {
            let proxy = try Self.proxy(
                """
                rules:
                  - name: dice
                    match: { path: "/d" }
                    faults: { status: { code: 500, rate: 0.5 }, seed: 7 }
                """)
            let client = try RawClient(port: proxy.port)
            return try (0..<30).map { _ in try client.request(RawClient.get(origin.url("/d"))).status }
        }
        let first = try run()
        #expect(first == (try run()))
        #expect(first.contains(500) && first.contains(200))
    }

    @Test("The admin API switches a rule's faults off and on (token-protected); a reload restores the file")
    func switches() throws {
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let configuration = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: flaky api
                    match: { path: "/api" }
                    faults: { status: { code: 429, rate: 1 } }
                """)
        let proxy = try ProxyHarness(configuration: configuration)
        let admin = try proxy.startAdmin(token: "s3cret")
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/api"))).status == 429)
        #expect(try Self.admin(admin, "PUT", "/rules/flaky%20api/faults?enabled=false").status == 401)
        let off = try Self.admin(admin, "PUT", "/rules/flaky%20api/faults?enabled=false", token: "s3cret")
        #expect(off.status == 200)
        #expect(try client.request(RawClient.get(origin.url("/api"))).text == "origin")
        let listed = try #require(Self.json(try Self.admin(admin, "GET", "/rules")) as? [[String: Any]])
        #expect(listed.first { $0["name"] as? String == "flaky api" }?["faults_enabled"] as? Bool == false)
        #expect(try Self.admin(admin, "PUT", "/rules/nope/faults?enabled=true", token: "s3cret").status == 404)
        let cache = proxy.onLoop { $0.configuration.cache }
        _ = proxy.onLoop { server in
            var again = configuration.with(listen: "127.0.0.1:0")
            again.cache = cache
            return server.reload(again)
        }
        #expect(try client.request(RawClient.get(origin.url("/api"))).status == 429)
    }

    @Test(
        "Bandwidth spellings",
        arguments: [
            ("256kbit", 32000), ("2mbit", 250_000), ("1.5Mbps", 187_500), ("64KiB/s", 65536), ("1MiB", 1 << 20),
        ])
    func bandwidthSpellings(text: String, bytes: Int) throws {
        let configuration = try ConfigLoader.load(
            yaml: "rules:\n  - match: {path: /a}\n    faults: {bandwidth: \"\(text)\"}")
        #expect(configuration.rules[0].faults?.bandwidth == bytes)
    }

    @Test(
        "Bad fault settings fail with their key path",
        arguments: [
            ("faults: {latency: '800ms..200ms'}", "rules[0].faults.latency"),
            ("faults: {latency: soon}", "rules[0].faults.latency"),
            ("faults: {status: {code: 99}}", "rules[0].faults.status.code"),
            ("faults: {status: {rate: 1.5}}", "rules[0].faults.status.rate"),
            ("faults: {reset: {after_bytes: lots}}", "rules[0].faults.reset.after_bytes"),
            ("faults: {timeout: {rate: -1}}", "rules[0].faults.timeout.rate"),
            ("faults: {seed: -3}", "rules[0].faults.seed"),
            ("faults: {bandwidth: 10bit}", "rules[0].faults.bandwidth"),
            ("faults: {bandwidth: fast}", "rules[0].faults.bandwidth"),
            ("faults: {jitter: 1}", "rules[0].faults.jitter"),
        ])
    func badSettings(yaml: String, key: String) {
        #expect {
            try ConfigLoader.load(yaml: "rules:\n  - match: {path: /a}\n    \(yaml)")
        } throws: { error in
            (error as? ConfigError)?.key == key
        }
    }
}
