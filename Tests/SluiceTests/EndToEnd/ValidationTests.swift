import Foundation
import Sluice
import SluiceTestKit
import Testing

@Suite("Response validation through the proxy")
struct ValidationTests {
    /// A configuration whose rule `api` covers 127.0.0.1 `/v1/**`.
    static func configuration(_ mode: Acceptance.RejectMode, types: [String] = ["application/json"]) throws
        -> Configuration
    {
        try ConfigLoader.load(
            yaml: """
                rules:
                  - name: api
                    match: { host: "127.0.0.1", path: "/v1/**" }
                    accept:
                      status: ["200-299"]
                      content_types: [\(types.joined(separator: ", "))]
                      on_reject: \(mode.rawValue)
                """)
    }

    static func problem(_ response: ReceivedResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test("enforce: an HTML page from a JSON API is cancelled at the headers and becomes a 502 problem")
    func enforceCancelsEarly() throws {
        let total = 64 * 1024 * 1024
        let origin = try OriginServer { _ in
            .stream(status: 200, headers: [("Content-Type", "text/html")], total: total)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration(.enforce))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v1/page")))
        #expect(response.status == 502)
        #expect(response.header("content-type") == "application/problem+json")
        let problem = try Self.problem(response)
        #expect(problem["type"] as? String == "https://sluice.dev/problems/unacceptable-content-type")
        #expect(problem["detail"] as? String == "Request failed: unacceptable content-type: text/html")
        #expect(problem["rule"] as? String == "api")
        #expect(problem["upstream_status"] as? Int == 200)
        #expect(problem["content_type"] as? String == "text/html")
        #expect(problem["url"] as? String == origin.url("/v1/page"))
        let acceptable = try #require(problem["acceptable"] as? [String: Any])
        #expect(acceptable["content_types"] as? [String] == ["application/json"])
        // The body was not downloaded: the proxy closed the origin's connection, whose sending
        // failed after handing the kernel only a fraction of it.
        #expect(proxy.waitUntil { origin.streamsCut == 1 }, "the origin's transfer was not cut")
        #expect(origin.streamedBytes < total / 2, "origin sent \(origin.streamedBytes) bytes")
        // The client connection stays usable, the failure was counted and logged once.
        let next = try client.request(RawClient.get(origin.url("/elsewhere/x")))
        #expect(next.status == 200)
        #expect(proxy.stats.validationRejected == 1)
        #expect(proxy.logLines.all.filter { $0.contains("unacceptable-content-type") }.count == 1)
    }

    @Test("enforce: a 404 fails on status; both reasons when both fail")
    func enforceStatus() throws {
        let origin = try OriginServer { request in
            request.target.hasSuffix("json")
                ? .respond(status: 404, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
                : .respond(status: 500, headers: [("Content-Type", "text/html")], body: Array("<h1>oops</h1>".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration(.enforce))
        let client = try RawClient(port: proxy.port)
        let notFound = try client.request(RawClient.get(origin.url("/v1/missing.json")))
        #expect(notFound.status == 502)
        #expect(try Self.problem(notFound)["detail"] as? String == "Request failed: not found (404)")
        #expect(try Self.problem(notFound)["upstream_status"] as? Int == 404)
        let both = try client.request(RawClient.get(origin.url("/v1/crash")))
        let problem = try Self.problem(both)
        #expect(problem["type"] as? String == "https://sluice.dev/problems/unacceptable-status")
        #expect(problem["reasons"] as? [String] == ["unacceptable-status", "unacceptable-content-type"])
        #expect(
            problem["detail"] as? String
                == "Request failed: internal server error (500); Request failed: unacceptable content-type: text/html")
    }

    @Test("report: the response passes unchanged, marked, counted and logged")
    func report() throws {
        let origin = try OriginServer { _ in .text("<h1>not found</h1>", status: 404, headers: []) }
        defer { origin.stop() }
        var configuration = try Self.configuration(.report)
        configuration.log.access = false
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v1/x")))
        #expect(response.status == 404)
        #expect(response.text == "<h1>not found</h1>")
        #expect(
            response.header("sluice-validation")
                == #"failed; reason="unacceptable-status"; rule="api", failed; reason="unacceptable-content-type"; rule="api""#
        )
        #expect(proxy.stats.validationReported == 1)
        #expect(proxy.logLines.all.contains { $0.contains("validation=") && $0.contains("not found (404)") })
    }

    @Test("Requests no rule matches are not validated; 3xx passed back and 304 to conditionals pass")
    func passes() throws {
        let origin = try OriginServer { request in
            if request.target.hasPrefix("/v1/moved") {
                return .respond(
                    status: 302, headers: [("Location", "/v1/new"), ("Content-Type", "text/html")],
                    body: Array("moved".utf8))
            }
            if request.header("if-none-match") != nil {
                return .respond(status: 304, headers: [("ETag", "\"1\"")], body: [])
            }
            return .text("plain", status: 404)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration(.enforce, types: ["application/json", "text/html"]))
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/other/x"))).status == 404)
        #expect(try client.request(RawClient.get(origin.url("/v1/moved"))).status == 302)
        let conditional = try client.request(RawClient.get(origin.url("/v1/etag"), extra: "If-None-Match: \"1\"\r\n"))
        #expect(conditional.status == 304)
        #expect(proxy.stats.validationRejected == 0)
    }

    @Test("A reload swaps the rules without dropping connections")
    func reload() throws {
        let origin = try OriginServer { _ in .text("hello") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration(.enforce))
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/v1/a"))).status == 502)
        // The harness gives each proxy its own cache file (and may choose its transport): keep
        // both, as a real reload of the same file would.
        let pending = proxy.onLoop { server in
            var new = Configuration().with(listen: "127.0.0.1:0")
            (new.cache, new.upstream) = (server.configuration.cache, server.configuration.upstream)
            return server.reload(new)
        }
        #expect(pending.isEmpty)
        #expect(try client.request(RawClient.get(origin.url("/v1/a"))).status == 200)
        let restart = proxy.onLoop { server in
            var new = Configuration().with(listen: "127.0.0.1:1")
            (new.cache, new.upstream) = (server.configuration.cache, server.configuration.upstream)
            return server.reload(new)
        }
        #expect(restart == ["listen"])
    }
}
