import Foundation
import Logging
import SluiceTestKit
import TLS
import Testing

@testable import Sluice

/// `record:` and `replay:` end to end: a session through a real proxy to a real origin is
/// recorded into a real SQLite file, the proxy and the origin stop, and a second proxy answers
/// the same requests from the file alone.
@Suite("Record and replay")
struct RecordReplayTests {
    static func temporaryPath(_ name: String) throws -> String {
        let directory = TestScratch.root.appendingPathComponent("sluice-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    static func proxy(_ yaml: String, record: String? = nil, replay: String? = nil) throws -> ProxyHarness {
        var configuration = try ConfigLoader.load(yaml: yaml)
        configuration.record.file = record
        configuration.replay.file = replay
        return try ProxyHarness(configuration: configuration)
    }

    /// An origin with a cacheable JSON list, an uncacheable counter, and a POST that answers with
    /// what it was sent.
    static func origin() throws -> OriginServer {
        let counter = Locked(0)
        return try OriginServer { request in
            switch request.method + " " + request.target.split(separator: "?")[0] {
            case "GET /items":
                return .respond(
                    status: 200,
                    headers: [
                        ("Content-Type", "application/json"), ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""),
                    ],
                    body: Array(#"{"items":[{"id":1,"name":"tea","note":null}],"query":"\#(request.target)"}"#.utf8))
            case "GET /counter":
                let value = counter.withLock { count in
                    count += 1
                    return count
                }
                return .text("count \(value)", headers: [("Cache-Control", "no-store"), ("Set-Cookie", "s=secret")])
            case "POST /orders":
                return .text(
                    "created " + String(decoding: request.body, as: UTF8.self), status: 201,
                    headers: [("Location", "/orders/7")])
            default:
                return .text("not here", status: 404)
            }
        }
    }

    @Test("A recorded session (GET, repeats, a POST, a no-store answer) is replayed byte for byte with the origin gone")
    func recordThenReplay() throws {
        let file = try Self.temporaryPath("session.sluicerec")
        let origin = try Self.origin()
        let requests = [
            RawClient.get(origin.url("/items?a=1&b=2")),
            RawClient.get(origin.url("/items?a=1&b=2")),  // a cache hit, recorded as the client got it
            RawClient.get(origin.url("/counter"), extra: "Cookie: id=42\r\nAuthorization: Bearer hush\r\n"),
            RawClient.get(origin.url("/counter")),
            "POST \(origin.url("/orders")) HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nmilk!",
            RawClient.get(origin.url("/missing")),
        ]
        var recorded: [ReceivedResponse] = []
        do {
            let proxy = try Self.proxy("{}", record: file)
            let client = try RawClient(port: proxy.port)
            for request in requests {
                recorded.append(try client.request(request, method: request.hasPrefix("POST") ? "POST" : "GET"))
            }
            proxy.shutdown()
        }
        origin.stop()
        #expect(recorded.map(\.status) == [200, 200, 200, 200, 201, 404])
        #expect(recorded[1].header("cache-status")?.contains("hit") == true)

        // The file: every exchange, credentials redacted, Sluice's own fields left out.
        let recording = try Recording.open(file)
        let exchanges = try recording.exchanges()
        #expect(exchanges.count == 6)
        #expect(exchanges.map(\.status) == [200, 200, 200, 200, 201, 404])
        #expect(exchanges[2].requestHeaders.contains { $0.name == "Authorization" && $0.value == "[redacted]" })
        #expect(exchanges[2].requestHeaders.contains { $0.name == "Cookie" && $0.value == "[redacted]" })
        #expect(exchanges[2].responseHeaders.contains { $0.name == "Set-Cookie" && $0.value == "[redacted]" })
        #expect(!exchanges[0].responseHeaders.contains { $0.hasName("cache-status") || $0.hasName("via") })
        #expect(!exchanges[1].responseHeaders.contains { $0.hasName("age") })
        #expect(exchanges[4].method == "POST" && exchanges[4].requestBody == Array("milk!".utf8))
        #expect(
            exchanges[4].requestBodyDigest
                == Digest.hex(Digest.sha256(UnsafeRawBufferPointer(Array("milk!".utf8).withUnsafeBytes { $0 }))))
        #expect(exchanges.allSatisfy { $0.responseComplete && $0.source == "proxy" && $0.duration >= 0 })

        // Replay with the origin gone: same statuses and bodies; query order does not matter;
        // the counter's two answers come in recorded order, then the last repeats.
        let proxy = try Self.proxy("{}", replay: file)
        let client = try RawClient(port: proxy.port)
        var replayed: [ReceivedResponse] = []
        for request in requests {
            replayed.append(try client.request(request, method: request.hasPrefix("POST") ? "POST" : "GET"))
        }
        #expect(replayed.map(\.status) == recorded.map(\.status))
        #expect(replayed.map(\.body) == recorded.map(\.body))
        #expect(replayed.allSatisfy { $0.header("cache-status") == "Sluice; hit; detail=replay" })
        #expect(replayed[4].header("location") == "/orders/7")
        #expect(replayed[0].header("etag") == "\"v1\"" && replayed[0].header("content-type") == "application/json")
        let reordered = try client.request(RawClient.get(origin.url("/items?b=2&a=1")))
        #expect(reordered.status == 200 && reordered.body == recorded[1].body)
        let third = try client.request(RawClient.get(origin.url("/counter")))
        #expect(third.text == "count 2")

        // A POST with another body: a 504 problem naming the closest recorded request and what differs.
        let other = try client.request(
            "POST \(origin.url("/orders")) HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nbread", method: "POST")
        #expect(other.status == 504)
        #expect(other.header("content-type") == "application/problem+json")
        let problem = try JSONSerialization.jsonObject(with: Data(other.body)) as? [String: Any]
        #expect((problem?["type"] as? String)?.hasSuffix("/replay-miss") == true)
        #expect((problem?["closest"] as? String)?.contains("POST \(origin.url("/orders"))") == true)
        #expect((problem?["differences"] as? [String])?.first?.hasPrefix("body:") == true)
        // The connection survives the miss.
        #expect(try client.request(RawClient.get(origin.url("/items?a=1&b=2"))).status == 200)
    }

    @Test("on_miss: forward sends what the recording lacks to the origin, the body read to match first")
    func missForwarded() throws {
        let file = try Self.temporaryPath("one.sluicerec")
        let origin = try Self.origin()
        defer { origin.stop() }
        do {
            let proxy = try Self.proxy("{}", record: file)
            let client = try RawClient(port: proxy.port)
            _ = try client.request(RawClient.get(origin.url("/counter")))
            proxy.shutdown()
        }
        let proxy = try Self.proxy("replay: { on_miss: forward }", replay: file)
        let client = try RawClient(port: proxy.port)
        #expect(try client.request(RawClient.get(origin.url("/counter"))).text == "count 1")
        let body = String(repeating: "x", count: 40_000)
        let posted = try client.request(
            "POST \(origin.url("/orders")) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
            method: "POST")
        #expect(posted.status == 201 && posted.text == "created " + body)
        #expect(posted.header("cache-status")?.contains("replay") != true)
        #expect(origin.requests.count == 2)  // the recording's request went upstream once, when recorded
    }

    @Test("A response an enforced contract refused is recorded as the origin sent it; replayed, it is refused again")
    func enforcedContractRecorded() throws {
        let file = try Self.temporaryPath("c.sluicerec")
        let bad = ContractTests.page([ContractTests.item(id: 1, price: "null")])
        let origin = try ContractTests.origin(body: bad)
        var configuration = try ContractTests.configuration("enforce")
        configuration.record.file = file
        do {
            let proxy = try ProxyHarness(configuration: configuration)
            #expect(try RawClient(port: proxy.port).request(RawClient.get(origin.url("/v2/items"))).status == 502)
            proxy.shutdown()
        }
        origin.stop()
        let recorded = try #require(try Recording.open(file).exchanges().first)
        #expect(recorded.status == 200 && recorded.responseBody == bad, "the origin's response, not the problem")
        #expect(recorded.responseHeaders.contains { $0.hasName("content-type") && $0.value == "application/json" })
        configuration.record.file = nil
        configuration.replay.file = file
        let proxy = try ProxyHarness(configuration: configuration)
        let replayed = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/v2/items")))
        #expect(replayed.status == 502 && replayed.header("content-type") == "application/problem+json")
    }

    @Test("Replayed responses are validated by the rules like the origin's")
    func replayValidated() throws {
        let file = try Self.temporaryPath("v.sluicerec")
        let origin = try Self.origin()
        do {
            let proxy = try Self.proxy("{}", record: file)
            _ = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/counter")))
            _ = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/items?a=1&b=2")))
            proxy.shutdown()
        }
        origin.stop()
        let proxy = try Self.proxy(
            """
            rules:
              - name: json only
                match: { path: "/counter" }
                accept: { content_types: [application/json], on_reject: enforce }
              - name: strip
                match: { path: "/items" }
                strip_json_nulls: true
            """, replay: file)
        let client = try RawClient(port: proxy.port)
        let rejected = try client.request(RawClient.get(origin.url("/counter")))
        #expect(rejected.status == 502)
        let stripped = try client.request(RawClient.get(origin.url("/items?a=1&b=2")))
        #expect(stripped.status == 200 && !stripped.text.contains("null"))
    }

    @Test("A recorded response no rule touches goes out like a plain hit, with the same head as through the session")
    func plainAndSessionHeadsAgree() throws {
        let file = try Self.temporaryPath("heads.sluicerec")
        let origin = try Self.origin()
        do {
            let proxy = try Self.proxy("{}", record: file)
            _ = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/items?a=1&b=2")))
            proxy.shutdown()
        }
        origin.stop()
        var heads: [[String]] = []
        for yaml in ["{}", "rules:\n  - match: { path: \"/**\" }\n    accept: { status: [\"100-599\"] }"] {
            let proxy = try Self.proxy(yaml, replay: file)
            let client = try RawClient(port: proxy.port)
            let response = try client.request(RawClient.get(origin.url("/items?b=2&a=1")))
            #expect(response.header("cache-status") == "Sluice; hit; detail=replay")
            heads.append([response.statusLine] + response.fields.map { "\($0.0): \($0.1)" })
            // HTTP/1.0 without keep-alive: the connection closes after it.
            let old = try RawClient(port: proxy.port)
            let closing = try old.request("GET \(origin.url("/items?a=1&b=2")) HTTP/1.0\r\n\r\n")
            #expect(closing.status == 200 && closing.header("connection") == "close")
        }
        #expect(heads[0] == heads[1])
    }

    @Test("Intercepted HTTPS is recorded and replayed with the origin gone")
    func interceptedRecordReplay() throws {
        let setup = try InterceptionTests.Setup()
        let file = try Self.temporaryPath("tls.sluicerec")
        let secure = try HTTPSOrigin(authority: setup.originCA)
        var configuration = try setup.configuration(connectPort: secure.port)
        configuration.record.file = file
        let first: InterceptionTests.Response
        do {
            let proxy = try ProxyHarness(configuration: configuration)
            first = try InterceptionTests.curl(secure.url("/json?x=1"), proxy: proxy.port, cacert: setup.caCert)
            proxy.shutdown()
        }
        secure.stop()
        #expect(first.status == 200 && !first.body.isEmpty)
        let recording = try Recording.open(file)
        #expect(try recording.exchanges().map(\.url) == [secure.url("/json?x=1")])
        configuration.record.file = nil
        configuration.replay.file = file
        let proxy = try ProxyHarness(configuration: configuration)
        let again = try InterceptionTests.curl(secure.url("/json?x=1"), proxy: proxy.port, cacert: setup.caCert)
        #expect(again.status == 200 && again.body == first.body)
        #expect(again.headers["cache-status"] == "Sluice; hit; detail=replay")
    }

    @Test("record.max_size reached: recording stops once, logged, the proxy goes on, what was written stays readable")
    func recordingFull() throws {
        let file = try Self.temporaryPath("full.sluicerec")
        let big = String(repeating: "b", count: 60_000)
        let origin = try OriginServer { _ in .text(big, headers: [("Cache-Control", "no-store")]) }
        defer { origin.stop() }
        let proxy = try Self.proxy("record: { max_size: 256KiB }", record: file)
        let client = try RawClient(port: proxy.port)
        for index in 0..<12 {
            #expect(try client.request(RawClient.get(origin.url("/b\(index)"))).body.count == 60_000)
            // One batch each: written (or refused once the file is full) before the next request.
            #expect(
                proxy.waitUntil {
                    proxy.onLoop { server in
                        server.environment.recorder.map { $0.written > index || $0.state != .recording } ?? true
                    }
                })
        }
        proxy.shutdown()
        let stops = proxy.logLines.all.filter { $0.contains("recording stopped") }
        #expect(stops.count == 1)
        let recording = try Recording.open(file)
        let count = try recording.count()
        #expect(count > 0 && count < 12)
        #expect(try recording.exchanges().allSatisfy { $0.responseBody.count == 60_000 })
    }

    @Test(
        "A file that is not a recording is refused with a clear message",
        arguments: [("text", "not a recording at all\n"), ("empty", "")])
    func brokenRecordingRefused(kind: String, content: String) throws {
        let file = try Self.temporaryPath("\(kind).sluicerec")
        try Data(content.utf8).write(to: URL(fileURLWithPath: file))
        #expect {
            _ = try Self.proxy("{}", replay: file)
        } throws: { error in
            "\(error)".contains(file)
        }
        let cache = try Self.temporaryPath("other.sqlite")
        _ = try CacheStore(
            settings: {
                var settings = Configuration.Cache(); settings.path = cache; return settings
            }(), logger: .init(label: "t"))
        #expect {
            _ = try Self.proxy("{}", replay: cache)
        } throws: { error in
            "\(error)".contains("not a Sluice recording")
        }
    }
}
