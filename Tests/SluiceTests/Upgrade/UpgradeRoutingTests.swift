import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// A handshake is a request like any other on its way up: rules map and rewrite it, a replay that
/// must not reach the network answers it, interim answers before its `101` are passed on, and
/// the `101` says nothing of content. Raw origins (their bytes as written) and a raw client.
@Suite("Upgrades routed as requests")
struct UpgradeRoutingTests {
    static let handshake =
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

    /// An origin that answers an upgrade with a 103, then a `101` that (wrongly) carries a length.
    static func switching() throws -> OriginServer {
        try OriginServer { _ in
            .raw(
                Array(
                    ("HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload\r\n\r\n"
                        + "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nContent-Length: 5\r\n\r\n").utf8))
        }
    }

    @Test("A rule's map remote and request rewrite apply to the handshake; a 103 before the 101 is passed on")
    func mappedAndRewritten() throws {
        let real = try OriginServer { _ in .text("the real origin") }
        defer { real.stop() }
        let staging = try Self.switching()
        defer { staging.stop() }
        let proxy = try ProxyHarness(
            configuration: try ConfigLoader.load(
                yaml: """
                    rules:
                      - name: staging
                        match: { path: "/mapped/**" }
                        upstream: "http://127.0.0.1:\(staging.port)/staging/"
                        rewrite: { request: { set: { X-Env: staging } } }
                    """))
        let client = try RawClient(port: proxy.port)
        try client.send(
            "GET \(real.url("/mapped/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(real.port)\r\n\(Self.handshake)\r\n")
        let early = try #require(try client.reader.readHead())
        #expect(early.startLine == "HTTP/1.1 103 Early Hints")
        #expect(early.fields.contains { $0.0 == "Link" })
        let switched = try #require(try client.reader.readHead())
        #expect(switched.startLine.hasPrefix("HTTP/1.1 101"))
        // A 1xx has no content and says none (RFC 9110 §8.6).
        #expect(!switched.fields.contains { $0.0.lowercased() == "content-length" }, "\(switched.fields)")
        #expect(real.requests.isEmpty)
        let sent = try #require(staging.requests.first)
        #expect(sent.target == "/staging/mapped/ws")
        #expect(sent.header("x-env") == "staging")
        #expect(sent.header("upgrade") == "websocket")
    }

    static func pausing(_ origin: OriginServer) throws -> (ProxyHarness, admin: UInt16) {
        var configuration = Configuration()
        configuration.breakpoints.points = [
            try Breakpoint.parse(["stage": "request", "match": ["path": "/ws"]], name: "ws").get()
        ]
        let proxy = try ProxyHarness(configuration: configuration)
        return (proxy, try proxy.startAdmin())
    }

    @Test(
        "A request breakpoint pauses the handshake before the origin hears of it; resumed with edited fields, the offer kept"
    )
    func handshakePausedAndEdited() throws {
        let origin = try Self.switching()
        defer { origin.stop() }
        let (proxy, admin) = try Self.pausing(origin)
        let client = try RawClient(port: proxy.port)
        try client.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        let item = try #require(try BreakpointTests.paused(admin).first)
        #expect(item["stage"] as? String == "request")
        #expect((item["request"] as? [String: Any])?["url"] as? String == origin.url("/ws"))
        #expect(origin.requests.isEmpty)
        // The edited list leaves out the offer (`Upgrade`, `Sec-WebSocket-Key`, `-Version`): it
        // still goes.
        let fields = #"[["Host", "127.0.0.1:\#(origin.port)"], ["X-Token", "edited"]]"#
        let id = try #require(item["id"] as? Int)
        #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(id)/resume", #"{"headers": \#(fields)}"#).0 == 200)
        _ = try #require(try client.reader.readHead())  // the 103
        let switched = try #require(try client.reader.readHead())
        #expect(switched.startLine.hasPrefix("HTTP/1.1 101"))
        let sent = try #require(origin.requests.first)
        #expect(sent.header("x-token") == "edited")
        #expect(sent.header("upgrade") == "websocket")
        #expect(sent.header("sec-websocket-key") != nil && sent.header("sec-websocket-version") == "13")
        // The line is written when the connection ends.
        client.socket.close()
        #expect(
            proxy.waitUntil { proxy.logLines.all.contains { $0.contains("request paused at ws; edited, resumed") } },
            "\(proxy.logLines.all)")
    }

    @Test(
        "A handshake paused at a request breakpoint and answered by the person: the client gets that answer, the origin nothing"
    )
    func handshakePausedAndAnswered() throws {
        let origin = try Self.switching()
        defer { origin.stop() }
        let (proxy, admin) = try Self.pausing(origin)
        let client = try RawClient(port: proxy.port)
        try client.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        let id = try #require(try BreakpointTests.paused(admin).first?["id"] as? Int)
        #expect(
            try BreakpointTests.admin(admin, "POST", "/paused/\(id)/answer", #"{"status": 403, "body": "not today"}"#).0
                == 200)
        let answer = try client.reader.readResponse()
        #expect(answer.status == 403 && answer.text == "not today")
        #expect(origin.requests.isEmpty)
        // Aborted instead, another gets the 502 that says so.
        let second = try RawClient(port: proxy.port)
        try second.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        let next = try #require(try BreakpointTests.paused(admin).first?["id"] as? Int)
        #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(next)/abort").0 == 200)
        let aborted = try second.reader.readResponse()
        #expect(aborted.status == 502 && aborted.text.contains("breakpoint"), "\(aborted.text)")
        // A client that leaves while its handshake waits takes its item out of the list.
        let leaving = try RawClient(port: proxy.port)
        try leaving.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        _ = try BreakpointTests.paused(admin)
        leaving.socket.close()
        #expect(
            try eventually(timeout: 10) {
                ((try BreakpointTests.admin(admin, "GET", "/paused").1 as? [[String: Any]]) ?? [[:]]).isEmpty
            })
        #expect(origin.requests.isEmpty)
    }

    @Test(
        "An origin that refuses the upgrade: its answer goes back whole, marked as any answer (Cache-Status), and the connection closes"
    )
    func refusedUpgrade() throws {
        let origin = try OriginServer { _ in
            .respond(status: 426, headers: [("Content-Type", "text/plain")], body: Array("upgrade elsewhere".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        try client.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        let answer = try client.reader.readResponse()
        #expect(answer.status == 426 && answer.text == "upgrade elsewhere")
        #expect(answer.header("cache-status") == "Sluice; fwd=bypass; detail=upgrade", "\(answer.headers)")
        #expect(answer.header("connection") == "close")
    }

    @Test("A rule's injected status answers the handshake as it answers any request: the origin is not asked")
    func injectedStatus() throws {
        let origin = try Self.switching()
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try ConfigLoader.load(
                yaml: """
                    rules:
                      - name: down
                        match: { path: "/ws" }
                        faults: { status: { code: 503, rate: 1 } }
                    """))
        let client = try RawClient(port: proxy.port)
        try client.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        #expect(try client.reader.readResponse().status == 503)
        #expect(origin.requests.isEmpty)
    }

    @Test("An upgrade to h2c only (retired by RFC 9113) goes on as an ordinary request, without its upgrade fields")
    func h2cIsNotRelayed() throws {
        let origin = try OriginServer { request in
            .text("upgrade=\(request.header("upgrade") ?? "-") settings=\(request.header("http2-settings") ?? "-")")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: Configuration())
        let client = try RawClient(port: proxy.port)
        let answer = try client.request(
            "GET \(origin.url("/h2c")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n"
        )
        #expect(answer.status == 200)
        #expect(answer.text == "upgrade=- settings=-")
    }

    @Test("Replaying with on_miss: fail, an upgrade (never recorded) is the miss's 504: the origin is not asked")
    func replayMissIsNotForwarded() throws {
        let origin = try Self.switching()
        defer { origin.stop() }
        let directory = TestScratch.root.appendingPathComponent("upgrade-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("empty.sluicerec").path
        // A recording of one plain exchange, made through a recording proxy.
        let plain = try OriginServer { _ in .text("recorded") }
        defer { plain.stop() }
        do {
            let recorder = try RecordReplayTests.proxy("{}", record: file)
            let client = try RawClient(port: recorder.port)
            #expect(try client.request(RawClient.get(plain.url("/other"))).status == 200)
            recorder.shutdown()
        }
        // (`replay.on_miss` is `fail` unless set.)
        let proxy = try RecordReplayTests.proxy("{}", replay: file)
        let client = try RawClient(port: proxy.port)
        try client.send("GET \(origin.url("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        let answer = try client.reader.readResponse()
        #expect(answer.status == 504)
        #expect(origin.requests.isEmpty)
    }
}
