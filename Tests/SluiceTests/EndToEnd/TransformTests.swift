import Codec
import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

@Suite("JSON null stripping through the proxy")
struct TransformTests {
    static let document =
        "{\n  \"id\": 7,\n  \"name\": null,\n  \"tags\": [null, {\"a\": null, \"b\": 1.50}],\n  \"note\": \"\\u00e9\"\n}"
    static let stripped = "{\n  \"id\": 7,\n  \"tags\": [null, {\"b\": 1.50}],\n  \"note\": \"\\u00e9\"\n}"

    static func stripRule(limit: String = "16MiB") throws -> Configuration {
        try ConfigLoader.load(
            yaml: """
                limits: { max_transform_body: \(limit) }
                rules:
                  - name: api
                    match: { path: "/v1/**" }
                    strip_json_nulls: true
                """)
    }

    static func json(_ text: String, headers: [(String, String)] = []) -> OriginServer.Reply {
        .respond(status: 200, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
    }

    @Test("A rule strips null members; Content-Length is recomputed and the ETag weakened")
    func byRule() throws {
        let origin = try OriginServer { _ in
            Self.json(Self.document, headers: [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")])
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.stripRule())
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v1/item")))
        #expect(response.text == Self.stripped)
        #expect(response.header("content-length") == String(Self.stripped.utf8.count))
        #expect(response.header("etag") == "W/\"v1\"")
        #expect(response.header("accept-ranges") == nil)
        #expect(response.header("sluice-validation") == nil)
        // Not under the rule: untouched.
        #expect(try client.request(RawClient.get(origin.url("/other"))).text == Self.document)
        #expect(proxy.stats.jsonStripped == 1)
    }

    @Test("The client header asks (and is not forwarded); `all` drops null elements; 0 declines a rule")
    func byHeader() throws {
        let origin = try OriginServer { _ in Self.json(Self.document) }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.stripRule())
        let client = try RawClient(port: proxy.port)
        let asked = try client.request(RawClient.get(origin.url("/plain"), extra: "Sluice-Strip-Nulls: 1\r\n"))
        #expect(asked.text == Self.stripped)
        #expect(origin.requests.last?.header("sluice-strip-nulls") == nil)
        let all = try client.request(RawClient.get(origin.url("/plain"), extra: "Sluice-Strip-Nulls: all\r\n"))
        #expect(all.text == "{\n  \"id\": 7,\n  \"tags\": [{\"b\": 1.50}],\n  \"note\": \"\\u00e9\"\n}")
        let declined = try client.request(RawClient.get(origin.url("/v1/x"), extra: "Sluice-Strip-Nulls: 0\r\n"))
        #expect(declined.text == Self.document)
    }

    @Test("Compressed bodies are decoded, stripped and sent decoded", arguments: ContentCoding.allCases)
    func compressed(coding: ContentCoding) throws {
        let encoded = coding.encode(Array(Self.document.utf8))
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", coding.rawValue)],
                body: encoded)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.stripRule())
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v1/z"), extra: "Accept-Encoding: gzip, br\r\n"))
        #expect(response.text == Self.stripped)
        #expect(response.header("content-encoding") == nil)
        #expect(response.header("content-length") == String(Self.stripped.utf8.count))
    }

    @Test("Chunked origin bodies are stripped and sent with a length; +json and text/javascript count as JSON")
    func chunkedAndTypes() throws {
        let origin = try OriginServer { request in
            let type = request.target.hasSuffix("js") ? "text/javascript" : "application/problem+json"
            let bytes = Array(Self.document.utf8)
            return .chunked(
                status: 200, headers: [("Content-Type", type)], chunks: [Array(bytes[0..<10]), Array(bytes[10...])])
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.stripRule())
        let client = try RawClient(port: proxy.port)
        for path in ["/v1/a.js", "/v1/b"] {
            let response = try client.request(RawClient.get(origin.url(path)))
            #expect(response.text == Self.stripped)
            #expect(response.header("content-length") == String(Self.stripped.utf8.count))
            #expect(response.header("transfer-encoding") == nil)
        }
    }

    @Test(
        "Untouched and marked: no-transform, invalid JSON, empty, single space, too large",
        arguments: [
            ("/v1/no-transform", "no-transform"), ("/v1/invalid", "not valid JSON"), ("/v1/empty", "empty"),
            ("/v1/space", "single space"), ("/v1/large", "max_transform_body"),
            ("/v1/large-chunked", "max_transform_body"),
            ("/v1/bad-gzip", "could not be decoded"),
        ])
    func untouched(path: String, reason: String) throws {
        let big = "{\"pad\":\"" + String(repeating: "x", count: 4000) + "\",\"n\":null}"
        let bodies: [String: (String, [(String, String)])] = [
            "/v1/no-transform": (Self.document, [("Cache-Control", "max-age=60, no-transform")]),
            "/v1/invalid": ("{\"a\":null,", []), "/v1/empty": ("", []), "/v1/space": (" ", []),
            "/v1/large": (big, []), "/v1/bad-gzip": ("not gzip at all", [("Content-Encoding", "gzip")]),
        ]
        let origin = try OriginServer { request in
            if request.target == "/v1/large-chunked" {
                let bytes = Array(big.utf8)
                return .chunked(
                    status: 200, headers: [("Content-Type", "application/json")],
                    chunks: stride(from: 0, to: bytes.count, by: 700).map {
                        Array(bytes[$0..<min($0 + 700, bytes.count)])
                    })
            }
            let (body, headers) = bodies[request.target]!
            return Self.json(body, headers: headers)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.stripRule(limit: "1KiB"))
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url(path)))
        let expected = path.hasPrefix("/v1/large") ? big : bodies[path]!.0
        #expect(response.text == expected)
        let mark = try #require(response.header("sluice-validation"))
        #expect(mark.hasPrefix("not-transformed; reason=\"json-not-transformed\""))
        #expect(mark.contains(reason), "\(mark)")
        #expect(mark.contains("rule=\"api\""))
        #expect(proxy.stats.jsonUntouched == 1)
    }

    @Test(
        "Bodies held whole for clients that do not read count in limits.max_held_bodies until sent; past it a body passes untouched, marked; every client gets its whole body"
    )
    func heldBodiesBudget() throws {
        let pad = String(repeating: "x", count: 12 << 20)
        let document = "{\"pad\":\"\(pad)\",\"n\":null}"
        let origin = try OriginServer { _ in Self.json(document) }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try ConfigLoader.load(
                yaml: "limits: { max_transform_body: 16MiB, max_held_bodies: 20MiB }\n"))
        let used = { proxy.onLoop { $0.environment.heldBodies.used } }
        // The first client asks and does not read: its stripped body waits in Sluice beyond what
        // its socket takes, still counted.
        let first = try RawClient(port: proxy.port, timeout: 30)
        try first.send(RawClient.get(origin.url("/a"), extra: "Sluice-Strip-Nulls: 1\r\n"))
        #expect(proxy.waitUntil { origin.requests.count == 1 && used() == document.utf8.count })
        // The second finds the budget taken: its body goes untouched, marked, as it comes.
        let second = try RawClient(port: proxy.port, timeout: 30)
        let late = try second.request(RawClient.get(origin.url("/b"), extra: "Sluice-Strip-Nulls: 1\r\n"))
        #expect(late.text == document)
        let mark = late.header("sluice-validation") ?? ""
        #expect(mark.contains("max_held_bodies"), "\(mark)")
        #expect(used() == document.utf8.count)
        // The first reads at last: all of its stripped body, and the budget is whole again.
        let stripped = try first.reader.readResponse()
        #expect(stripped.body.count == pad.utf8.count + 10 && stripped.text.hasSuffix("x\"}"))
        #expect(proxy.waitUntil { used() == 0 })
        #expect(proxy.stats.jsonStripped == 1 && proxy.stats.jsonUntouched == 1)
    }

    @Test("Non-JSON, HEAD and 204 responses pass without a mark")
    func notJSON() throws {
        let origin = try OriginServer { request in
            request.target == "/v1/none"
                ? .respond(status: 204, headers: [("Content-Type", "application/json")], body: [])
                : .text("{\"a\":null}")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.stripRule())
        let client = try RawClient(port: proxy.port)
        let text = try client.request(RawClient.get(origin.url("/v1/text")))
        #expect(text.text == "{\"a\":null}")
        #expect(text.header("sluice-validation") == nil)
        #expect(try client.request(RawClient.get(origin.url("/v1/none"))).status == 204)
        #expect(proxy.stats.jsonUntouched == 0)
    }
}
