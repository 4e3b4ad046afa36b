import Codec
import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// API contracts through the proxy, with the shop document of Tests/Fixtures/contracts (a
/// multi-file OpenAPI 3.0 document) and a real origin on loopback.
@Suite("Contracts through the proxy")
struct ContractTests {
    static let shop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/contracts/shop.yaml").path

    static func configuration(
        _ mode: String, requests: String = "off", undocumented: String = "report", cache: String? = nil,
        stripNulls: Bool = false
    )
        throws -> Configuration
    {
        var yaml = """
            rules:
              - name: shop
                match: { host: "127.0.0.1", path: "/v2/**" }
                strip_json_nulls: \(stripNulls)
                contract:
                  openapi: \(shop)
                  on_violation: \(mode)
                  requests: \(requests)
                  undocumented: \(undocumented)
            """
        if let cache { yaml = "cache:\n  path: \(cache)\n" + yaml }
        var configuration = try ConfigLoader.load(yaml: yaml).loadingContracts()
        configuration.log.access = true
        return configuration
    }

    static func item(id: Int, price: String = "12.5") -> String {
        #"{"id": \#(id), "name": "Lamp", "price": \#(price), "status": "available", "created_at": "2026-11-25T10:00:00Z", "tags": ["home"]}"#
    }

    static func page(_ items: [String]) -> [UInt8] {
        Array("{\"items\": [\(items.joined(separator: ","))], \"total\": \(items.count)}".utf8)
    }

    static func origin(body: [UInt8], headers: [(String, String)] = [("X-Rate-Limit", "10")]) throws -> OriginServer {
        try OriginServer { _ in
            .respond(
                status: 200,
                headers: [("Content-Type", "application/json"), ("Cache-Control", "max-age=60")] + headers,
                body: body)
        }
    }

    /// `POST /v2/items` (the shop's createItem, its X-Request-Id given) with `body` of `type`.
    static func createItem(_ origin: OriginServer, type: String, body: String) -> String {
        "POST \(origin.url("/v2/items")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
            + "Content-Type: \(type)\r\nX-Request-Id: 3f1c2a9e-8f7b-4c0e-9d3a-1b2c3d4e5f60\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func problem(_ response: ReceivedResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test("enforce: a null where the document promises a number becomes a 502 contract-violation problem, never stored")
    func enforceBody() throws {
        let directory = TestScratch.root.appendingPathComponent(
            "sluice-contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try Self.origin(body: Self.page([Self.item(id: 1), Self.item(id: 2, price: "null")]))
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration("enforce", cache: directory.appendingPathComponent("c.sqlite").path))
        let adminPort = try proxy.startAdmin()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(response.status == 502)
        #expect(response.header("content-type") == "application/problem+json")
        // Nothing is stored of a rejected answer, and its Cache-Status says so.
        #expect(response.header("cache-status") == "Sluice; fwd=uri-miss; detail=rejected", "\(response.headers)")
        let problem = try Self.problem(response)
        #expect(problem["type"] as? String == "https://sluice.dev/problems/contract-violation")
        #expect(problem["rule"] as? String == "shop")
        #expect(problem["violations_total"] as? Int == 1)
        let operation = try #require(problem["operation"] as? [String: Any])
        #expect(operation["operationId"] as? String == "listItems")
        #expect(operation["method"] as? String == "GET")
        #expect(operation["path"] as? String == "/items")
        let violations = try #require(problem["violations"] as? [[String: Any]])
        #expect(violations.first?["pointer"] as? String == "/items/1/price")
        #expect(violations.first?["keyword"] as? String == "type")
        #expect(violations.first?["expected"] as? String == "number")
        #expect(violations.first?["found"] as? String == "null")
        #expect((violations.first?["schema"] as? String)?.hasSuffix("item.yaml#/Item/properties/price") == true)
        // Not stored: the next request goes to the origin again.
        let again = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(again.status == 502)
        #expect(origin.requests.count == 2)
        #expect(proxy.stats.contractFailed == 2)
        #expect(
            proxy.waitUntil { proxy.logLines.all.filter { $0.contains("contract=\"1:/items/1/price:type") }.count == 2 }
        )
        // /stats counts the checks, failures and rejections, in all and for the rule, with what
        // the rule's document can check.
        let admin = try RawClient(port: adminPort)
        let stats = try #require(
            try JSONSerialization.jsonObject(
                with: Data(admin.request("GET /stats HTTP/1.1\r\nHost: 127.0.0.1:\(adminPort)\r\n\r\n").body))
                as? [String: Any])
        let contracts = try #require(stats["contracts"] as? [String: Any])
        #expect(contracts["failed"] as? Int == 2 && contracts["rejected"] as? Int == 2, "\(contracts)")
        let rule = try #require((contracts["rules"] as? [[String: Any]])?.first)
        #expect(rule["rule"] as? String == "shop" && rule["operations"] as? Int == 6, "\(rule)")
        #expect(rule["with_response_schemas"] as? Int == 5 && rule["warnings"] as? Int == 2)
        #expect(rule["checked"] as? Int == 2 && rule["failed"] as? Int == 2 && rule["rejected"] as? Int == 2)
    }

    @Test(
        "A Content-Encoding whose bytes do not decode breaks the contract: 502 under enforce, marked under report; a good one passes"
    )
    func corruptCoding() throws {
        let good = ContentCoding.gzip.encode(Self.page([Self.item(id: 1)]))
        var broken = good
        broken[12] ^= 0xFF  // inside the deflate stream: the CRC or the data no longer holds
        broken.removeLast(4)
        let corrupt = broken
        let origin = try OriginServer { request in
            .respond(
                status: 200,
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("X-Rate-Limit", "1")],
                body: request.target.hasSuffix("good") ? good : corrupt)
        }
        defer { origin.stop() }
        let enforcing = try ProxyHarness(configuration: try Self.configuration("enforce"))
        let client = try RawClient(port: enforcing.port)
        let refused = try client.request(RawClient.get(origin.url("/v2/items?bad")))
        #expect(refused.status == 502, "\(refused.headers)")
        let violations = try #require(try Self.problem(refused)["violations"] as? [[String: Any]])
        #expect(violations.first?["keyword"] as? String == "content-encoding", "\(violations)")
        #expect(violations.first?["expected"] as? String == "a body that decodes as gzip")
        let passed = try client.request(RawClient.get(origin.url("/v2/items?good")))
        #expect(passed.status == 200 && passed.body == good, "\(passed.headers)")
        #expect(passed.header("sluice-validation")?.hasPrefix("passed") == true, "\(passed.headers)")
        let reporting = try ProxyHarness(configuration: try Self.configuration("report"))
        let marked = try RawClient(port: reporting.port).request(RawClient.get(origin.url("/v2/items?bad")))
        #expect(marked.status == 200 && marked.body == corrupt)
        #expect(
            marked.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=1") == true,
            "\(marked.headers)")
    }

    @Test("enforce: a body that keeps the promise passes, marked, and is stored")
    func enforcePasses() throws {
        let directory = TestScratch.root.appendingPathComponent(
            "sluice-contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Self.page([Self.item(id: 1)])
        let origin = try Self.origin(body: body)
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration("enforce", cache: directory.appendingPathComponent("c.sqlite").path))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.header("sluice-validation")?.contains("passed; reason=\"contract\"") == true)
        let hit = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(hit.status == 200)
        #expect(hit.body == body)
        #expect(origin.requests.count == 1)
    }

    @Test("enforce: a documented body that is not JSON (a CSV report) passes its head's checks, and says so")
    func enforceMarksWhatHasNoBodySchema() throws {
        let origin = try OriginServer { _ in
            .respond(status: 200, headers: [("Content-Type", "text/csv")], body: Array("a,b\n1,2\n".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("enforce"))
        let client = try RawClient(port: proxy.port)
        let report = try client.request(RawClient.get(origin.url("/v2/report.csv")))
        #expect(report.status == 200 && report.text == "a,b\n1,2\n")
        #expect(report.header("sluice-validation") == "passed; reason=\"contract\"; rule=\"shop\"", "\(report.headers)")
        let head = try client.request(
            "HEAD \(origin.url("/v2/report.csv")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n", method: "HEAD")
        #expect(head.header("sluice-validation")?.hasPrefix("passed") == true, "\(head.headers)")
    }

    @Test("enforce: a required response header missing fails at the headers")
    func enforceHeader() throws {
        let origin = try Self.origin(body: Self.page([Self.item(id: 1)]), headers: [])
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("enforce"))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(response.status == 502)
        let violations = try #require(try Self.problem(response)["violations"] as? [[String: Any]])
        #expect(violations.first?["pointer"] as? String == "header:X-Rate-Limit")
        #expect(violations.first?["keyword"] as? String == "required")
    }

    @Test("report: the response passes unchanged with Sluice-Validation saying how many violations")
    func report() throws {
        let body = Self.page([Self.item(id: 1, price: "\"12\""), Self.item(id: 2, price: "-1")])
        let origin = try Self.origin(body: body)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("report"))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=2") == true)
        #expect(proxy.stats.contractFailed == 1)
        // Stored, then served again: the hit is checked as it goes out, counted like the fetch (a
        // run's report with a warm cache must not pass what the client got broken).
        let hit = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(hit.header("cache-status")?.hasPrefix("Sluice; hit") == true, "\(hit.fields)")
        #expect(hit.body == body && origin.requests.count == 1)
        #expect(hit.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=2") == true)
        #expect(proxy.stats.contractFailed == 2)
        // An undocumented status is reported too (undocumented: report).
        let other = try OriginServer { _ in .text("{}", status: 418, headers: [("Content-Type", "application/json")]) }
        defer { other.stop() }
        let teapot = try client.request(RawClient.get(other.url("/v2/items/7")))
        #expect(teapot.status == 418)
        #expect(teapot.header("sluice-validation")?.contains("violations=1") == true)
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("undocumented-status") } })
        // So is an undocumented operation, on the head as well.
        let nowhere = try client.request(RawClient.get(other.url("/v2/nowhere")))
        #expect(nowhere.status == 418)
        #expect(
            nowhere.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=1") == true,
            "\(nowhere.headers)")
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("undocumented-operation") } })
    }

    @Test("undocumented: report under on_violation: enforce passes an undocumented operation with its head marked")
    func undocumentedReportedUnderEnforce() throws {
        let origin = try OriginServer { _ in .text("{}", headers: [("Content-Type", "application/json")]) }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("enforce", undocumented: "report"))
        let response = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/v2/nowhere")))
        #expect(response.status == 200)
        #expect(
            response.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=1") == true,
            "\(response.headers)")
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("undocumented-operation") } })
    }

    @Test("report with strip_json_nulls: the verdict still marks the head the stripper held")
    func reportedWhileStripping() throws {
        let bad = Self.item(id: 1, price: "\"x\"").replacingOccurrences(
            of: "\"tags\"", with: "\"note\": null, \"tags\"")
        let origin = try OriginServer { request in
            .respond(
                status: 200, headers: [("Content-Type", "application/json"), ("X-Rate-Limit", "10")],
                body: request.target.contains("bad")
                    ? Self.page([bad] + (request.target.contains("big") ? (0..<600).map { Self.item(id: $0) } : []))
                    : Self.page([Self.item(id: 2)]))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("report", stripNulls: true))
        let client = try RawClient(port: proxy.port)
        let broken = try client.request(RawClient.get(origin.url("/v2/items?bad=1")))
        #expect(broken.status == 200 && !broken.text.contains("null"))
        #expect(
            broken.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=") == true,
            "\(broken.header("sluice-validation") ?? "none")")
        // Over 64 KiB: held by the stripper all the same, so marked all the same.
        let big = try client.request(RawClient.get(origin.url("/v2/items?bad=1&big=1")))
        #expect(big.body.count > 65536)
        #expect(
            big.header("sluice-validation")?.contains("failed; reason=\"contract\"") == true,
            "\(big.header("sluice-validation") ?? "none")")
        let fine = try client.request(RawClient.get(origin.url("/v2/items")))
        #expect(fine.header("sluice-validation")?.contains("passed; reason=\"contract\"") == true, "\(fine.headers)")
    }

    @Test("undocumented: report is never enforced: not on a response a transform holds, not on a request body")
    func undocumentedNeverEnforced() throws {
        let origin = try OriginServer { request in
            request.method == "POST"
                ? .text("{}", headers: [("Content-Type", "application/json")])
                : .respond(
                    status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"a": null}"#.utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration(
                "enforce", requests: "enforce", undocumented: "report", stripNulls: true))
        let client = try RawClient(port: proxy.port)
        // An undocumented operation, its body held for the null stripper: passed, marked, stripped.
        let nowhere = try client.request(RawClient.get(origin.url("/v2/nowhere")))
        #expect(nowhere.status == 200)
        #expect(nowhere.body == Array("{}".utf8))
        #expect(
            nowhere.header("sluice-validation")?.contains("failed; reason=\"contract\"; violations=1") == true,
            "\(nowhere.headers)")
        // A request body of a media type the operation does not document: sent whole, marked.
        let body = "plain words"
        let post = try client.request(Self.createItem(origin, type: "text/plain", body: body), method: "POST")
        #expect(post.status == 200)
        #expect(origin.requests.last?.body == Array(body.utf8))
        #expect(
            post.header("sluice-validation")?.contains("failed; reason=\"request-contract\"; violations=1") == true,
            "\(post.headers)")
    }

    @Test("requests: report forwards a broken request; its verdict reaches the head, the log and the metrics")
    func requestsReported() throws {
        let origin = try Self.origin(body: Self.page([]))
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("report", requests: "report"))
        let client = try RawClient(port: proxy.port)
        // A query parameter of the wrong type, no body: the response keeps its own promise.
        let response = try client.request(RawClient.get(origin.url("/v2/items?limit=abc")))
        #expect(response.status == 200)
        let marks = response.header("sluice-validation") ?? ""
        #expect(marks.contains("failed; reason=\"request-contract\"; violations=1; rule=\"shop\""), "\(marks)")
        #expect(marks.contains("passed; reason=\"contract\""), "\(marks)")
        // A body that breaks the request schema, sent whole.
        let body = #"{"name": "Lamp", "price": 12.5, "status": "available", "created_at": "2026-11-25T10:00:00Z"}"#
        let post = try client.request(Self.createItem(origin, type: "application/json", body: body), method: "POST")
        #expect(post.status == 200)
        #expect(origin.requests.count == 2)
        #expect(origin.requests.last?.body == Array(body.utf8))
        #expect(post.header("sluice-validation")?.contains("failed; reason=\"request-contract\"; violations=1") == true)
        #expect(proxy.stats.contractFailed >= 2)
        // The access log names the broken request, as a warning that says why (as a response's).
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains {
                    $0.hasPrefix("warning ") && $0.contains("/v2/items?limit=abc")
                        && $0.contains("contract=\"1:query:limit:") && $0.contains("validation=\"The request")
                }
            }, "\(proxy.logLines.all)")
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("POST") && $0.contains("contract=") } })
        // Two exchanges, both broken by their request: counted once each, not once per check.
        #expect(proxy.waitUntil { proxy.onLoop { $0.contractCoverage.exchanges(of: "shop") } == (2, 2) })
        // A request that keeps its promise counts in its operation's request row too, its body
        // validated like the broken one's.
        let good =
            #"{"name": "Lamp", "price": 12.5, "status": "available", "created_at": "2026-11-25T10:00:00Z", "secret": "s"}"#
        #expect(
            try client.request(Self.createItem(origin, type: "application/json", body: good), method: "POST").status
                == 200)
        // (Its response, a 200 the document does not list for createItem, breaks its own.)
        #expect(proxy.waitUntil { proxy.onLoop { $0.contractCoverage.exchanges(of: "shop") }.checked == 3 })
        let rows = proxy.onLoop { $0.contractCoverage.cases }.map(\.value).filter { $0.status == "request" }
        let create = try #require(rows.first { $0.method == "POST" }, "\(rows)")
        #expect((create.seen, create.validated, create.failed) == (2, 2, 1))
        let list = try #require(rows.first { $0.method == "GET" }, "\(rows)")
        #expect((list.seen, list.validated, list.failed) == (1, 0, 1))
    }

    @Test("A request broken under report, its response then refused under enforce: the 502 carries both verdicts")
    func bothVerdictsOnTheProblem() throws {
        let origin = try Self.origin(body: Self.page([Self.item(id: 1, price: "null")]))
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("enforce", requests: "report"))
        let response = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/v2/items?limit=abc")))
        #expect(response.status == 502)
        let marks = response.header("sluice-validation") ?? ""
        #expect(marks.contains("failed; reason=\"request-contract\"; violations=1; rule=\"shop\""), "\(marks)")
        #expect(marks.contains("failed; reason=\"contract\"; violations=1; rule=\"shop\""), "\(marks)")
    }

    @Test("A response edited at a breakpoint is checked as it goes out: the head says the edited body's verdict")
    func editedResponseChecked() throws {
        let origin = try Self.origin(body: Self.page([Self.item(id: 1)]))
        defer { origin.stop() }
        var configuration = try Self.configuration("report")
        configuration.breakpoints.points = [
            try Breakpoint.parse(["name": "items", "stage": "response", "match": ["path": "/v2/**"]]).get()
        ]
        let proxy = try ProxyHarness(configuration: configuration)
        let admin = try proxy.startAdmin()
        let pending = BreakpointTests.Pending(
            proxy: proxy.port, "GET \(origin.url("/v2/items")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let id = try #require(try BreakpointTests.paused(admin).first?["id"] as? Int)
        // The origin's body kept its promise; the person's breaks it (a price that is a string).
        let broken = String(decoding: Self.page([Self.item(id: 1, price: #""free""#)]), as: UTF8.self)
        let edit = String(
            decoding: try JSONSerialization.data(withJSONObject: ["body": broken]), as: UTF8.self)
        #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(id)/resume", edit).0 == 200)
        let response = try pending.response()
        #expect(response.status == 200)
        let marks = response.header("sluice-validation") ?? ""
        #expect(marks.contains("failed; reason=\"contract\"; violations=1"), "\(marks)")
        #expect(!marks.contains("passed"), "\(marks)")
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains {
                    $0.contains("/v2/items") && $0.contains("contract=\"1:/items/0/price:type")
                }
            }, "\(proxy.logLines.all)")
    }

    @Test("requests: enforce answers 400 and nothing reaches the origin")
    func requestsEnforced() throws {
        let origin = try Self.origin(body: Self.page([]))
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("report", requests: "enforce"))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v2/items?limit=abc")))
        #expect(response.status == 400)
        let problem = try Self.problem(response)
        #expect(problem["type"] as? String == "https://sluice.dev/problems/contract-violation")
        let violations = try #require(problem["violations"] as? [[String: Any]])
        #expect(violations.first?["pointer"] as? String == "query:limit")
        #expect(origin.requests.isEmpty)
        let fine = try client.request(RawClient.get(origin.url("/v2/items?limit=5")))
        #expect(fine.status == 200)
        #expect(origin.requests.count == 1)
        // A readOnly property sent back (OpenAPI 3.0: SHOULD NOT) is reported, not refused: a
        // client that PUTs what it read is common.
        let sentBack =
            #"{"id": 7, "name": "Lamp", "price": 12.5, "status": "available", "created_at": "2026-11-25T10:00:00Z", "secret": "s"}"#
        let post = try client.request(
            Self.createItem(origin, type: "application/json", body: sentBack), method: "POST")
        #expect(origin.requests.count == 2, "forwarded: \(post.status)")
        #expect(
            post.header("sluice-validation")?.contains("failed; reason=\"request-contract\"; violations=1") == true,
            "\(post.headers)")
    }

    @Test(
        "enforce, a chunked body over max_transform_body: streamed unvalidated, and its origin connection answers the next request"
    )
    func enforceOverLimitKeepsConnectionUsable() throws {
        let items = (0..<3_000).map { Self.item(id: $0) }
        let body = Self.page(items)
        let chunks = stride(from: 0, to: body.count, by: 16_384).map { Array(body[$0..<min(body.count, $0 + 16_384)]) }
        let origin = try OriginServer { request in
            request.target.hasSuffix("?big")
                ? .chunked(
                    status: 200, headers: [("Content-Type", "application/json"), ("X-Rate-Limit", "1")], chunks: chunks)
                : .respond(
                    status: 200, headers: [("Content-Type", "application/json"), ("X-Rate-Limit", "1")],
                    body: Self.page([]))
        }
        defer { origin.stop() }
        var configuration = try Self.configuration("enforce")
        configuration.limits.maxTransformBody = 64 << 10
        configuration.timeouts.upstreamResponse = 3_000
        configuration.cache.enabled = false
        let proxy = try ProxyHarness(configuration: configuration)
        for round in 0..<2 {
            let big = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/v2/items?big")))
            #expect(big.status == 200 && big.body.count == body.count, "round \(round)")
            #expect(big.header("sluice-validation")?.contains("body-too-large") == true)
            Thread.sleep(forTimeInterval: 0.3)
            let small = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/v2/items")))
            #expect(small.status == 200, "round \(round): \(small.status)")
        }
    }

    @Test("Coverage names an undocumented operation by its request path, and marks an undocumented status")
    func coverageOfWhatTheDocumentLacks() throws {
        let origin = try OriginServer { request in
            .respond(
                status: request.target.hasSuffix("/items/5") ? 500 : 200,
                headers: [("Content-Type", "application/json"), ("X-Rate-Limit", "10")],
                body: Array(Self.page([]))
            )
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration("report"))
        let client = try RawClient(port: proxy.port)
        for path in ["/v2/nothing/here?x=1", "/v2/nothing/here", "/v2/items/5", "/v2/items/7"] {
            _ = try client.request(RawClient.get(origin.url(path)))
        }
        #expect(proxy.waitUntil { proxy.onLoop { $0.contractCoverage.exchanges(of: "shop") }.checked == 4 })
        let cases = proxy.onLoop { $0.contractCoverage.cases }.map(\.value)
        let called = try #require(cases.first { $0.operation == "GET /v2/nothing/here (undocumented)" }, "\(cases)")
        #expect(called.seen == 2 && !called.documented)
        let failing = try #require(cases.first { $0.template == "/items/{itemId}" && $0.status == "500" }, "\(cases)")
        #expect(!failing.documented)
        let fine = try #require(cases.first { $0.template == "/items/{itemId}" && $0.status == "200" }, "\(cases)")
        #expect(fine.documented)
    }
}
