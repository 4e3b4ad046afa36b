import EventIO
import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// The native HTTP/1.1 transport (`upstream.engine: auto`): which requests it carries, its pool,
/// and what it writes and reads, against real origins on loopback.
@Suite("Native HTTP/1.1 upstream transport")
struct NativeTransportTests {
    static func configuration(_ engine: Configuration.UpstreamEngine) -> Configuration {
        var configuration = Configuration()
        configuration.upstream.engine = engine
        return configuration
    }

    @Test("auto carries plain requests natively over one pooled connection; curl carries them with libcurl")
    func enginesCarry() throws {
        let origin = try OriginServer { request in .text("n=\(request.connection)") }
        defer { origin.stop() }
        for engine in Configuration.UpstreamEngine.allCases {
            let proxy = try ProxyHarness(configuration: Self.configuration(engine))
            let before = Set(origin.requests.map(\.connection))
            // Five clients, one after another, each on its own connection to the proxy.
            for index in 0..<5 {
                let response = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/n\(index)")))
                #expect(response.status == 200)
            }
            let used = Set(origin.requests.map(\.connection)).subtracting(before)
            #expect(used.count == 1, "\(engine): \(used.count) origin connections for 5 requests")
            let stats = proxy.stats
            #expect(stats.upstreamConnections == 1)
            switch engine {
            case .auto:
                #expect(stats.upstreamNativeTransfers == 5 && stats.upstreamCurlTransfers == 0)
            case .curl:
                #expect(stats.upstreamCurlTransfers == 5 && stats.upstreamNativeTransfers == 0)
            }
        }
    }

    @Test("What auto leaves to libcurl: parent proxies, gRPC to https:// origins, origins that speak only HTTP/2")
    func carries() throws {
        let loop = try EventLoop()
        var settings = Session.Settings()
        settings.engine = .auto
        let transport = NativeTransport(loop: loop, settings: settings)
        func request(_ url: String, headers: HTTPFields = HTTPFields()) -> UpstreamRequest {
            UpstreamRequest(method: "GET", url: TargetURL(url)!, headers: headers, body: .none)
        }
        #expect(transport.carries(request("http://a.test/x")))
        #expect(transport.carries(request("https://a.test/x")))
        var grpc = HTTPFields()
        grpc.append(name: "Content-Type", value: "application/grpc+proto")
        #expect(!transport.carries(request("https://a.test/svc/Method", headers: grpc)))
        var parented = request("http://a.test/x")
        parented.parent = try ParentProxy.parse("http://parent.test:3128").get()
        #expect(!transport.carries(parented))
        transport.speaksOnlyHTTP2(OriginKey(request("https://h2.test/")))
        #expect(!transport.carries(request("https://h2.test/y")))
        #expect(transport.carries(request("https://a.test/y")))
        settings.engine = .curl
        #expect(!NativeTransport(loop: loop, settings: settings).carries(request("http://a.test/x")))
    }

    @Test("The request head: origin-form target, Host from the URL unless kept, fields in order, the body's framing")
    func requestHead() throws {
        var fields = HTTPFields()
        fields.append(name: "Accept", value: "application/json")
        fields.append(name: "X-Empty", value: "")
        var request = UpstreamRequest(
            method: "POST", url: TargetURL("http://a.test:8080/p?q=1")!, headers: fields, body: .length(3))
        #expect(
            String(decoding: RequestHeadWriter.head(request), as: UTF8.self)
                == "POST /p?q=1 HTTP/1.1\r\nHost: a.test:8080\r\nAccept: application/json\r\nX-Empty: \r\nContent-Length: 3\r\n\r\n"
        )
        request.body = .streamed
        request.headers.append(name: "Host", value: "kept.test")
        #expect(
            String(decoding: RequestHeadWriter.head(request), as: UTF8.self)
                == "POST /p?q=1 HTTP/1.1\r\nAccept: application/json\r\nX-Empty: \r\nHost: kept.test\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        // A target made from a redirect's Location: bytes a request line must not hold go encoded.
        let odd = UpstreamRequest(
            method: "GET", url: TargetURL(scheme: "http", host: "a.test", port: 80, pathAndQuery: "/a b\u{0B}é"),
            headers: HTTPFields(), body: .none)
        #expect(
            String(decoding: RequestHeadWriter.head(odd), as: UTF8.self)
                == "GET /a%20b%0B%C3%A9 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let options = UpstreamRequest(
            method: "OPTIONS", url: TargetURL("http://a.test")!, headers: HTTPFields(), body: .none)
        #expect(
            String(decoding: RequestHeadWriter.head(options), as: UTF8.self)
                == "OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n")
    }

    @Test("Response framing by RFC 9112 §6.3: none for HEAD, 204 and 304; chunked; a length; else the close")
    func responseFraming() {
        func head(_ status: Int, version: String = "1.1", _ fields: [(String, String)]) -> ResponseHead {
            var headers = HTTPFields()
            for (name, value) in fields { headers.append(name: name, value: value) }
            return ResponseHead(status: status, version: version, headers: headers)
        }
        let length = [("Content-Length", "5")]
        #expect(ResponseBodyFraming.of(method: "HEAD", head: head(200, length)).length == .none)
        #expect(ResponseBodyFraming.of(method: "GET", head: head(204, length)).length == .none)
        #expect(ResponseBodyFraming.of(method: "GET", head: head(304, length)).length == .none)
        #expect(
            ResponseBodyFraming.of(method: "GET", head: head(200, length))
                == .init(length: .exactly(5), keepAlive: true))
        #expect(
            ResponseBodyFraming.of(method: "GET", head: head(200, [("Transfer-Encoding", "chunked")]))
                == .init(length: .chunked, keepAlive: true))
        #expect(
            ResponseBodyFraming.of(method: "GET", head: head(200, [])) == .init(length: .untilClose, keepAlive: false))
        #expect(!ResponseBodyFraming.of(method: "GET", head: head(200, length + [("Connection", "close")])).keepAlive)
        #expect(!ResponseBodyFraming.of(method: "GET", head: head(200, version: "1.0", length)).keepAlive)
        #expect(
            ResponseBodyFraming.of(
                method: "GET", head: head(200, version: "1.0", length + [("Connection", "Keep-Alive")])
            ).keepAlive)
    }

    @Test("An origin that closes its idle connections: the next request opens a new one, no client sees an error")
    func idleCloses() throws {
        // Each answer is complete by its length, then the origin closes (Connection: close unsaid).
        let origin = try OriginServer { request in
            .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: Self.configuration(.auto))
        for index in 0..<6 {
            let response = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/r\(index)")))
            #expect(response.status == 200 && response.text == "ok", "request \(index)")
            if index % 2 == 1 { Thread.sleep(forTimeInterval: 0.05) }  // sometimes the close is seen first
        }
        #expect(proxy.stats.errors == 0)
    }

    @Test("upstream.max_connections_per_host: transfers beyond it wait for a pooled connection and all complete")
    func perHostLimit() throws {
        let origin = try OriginServer { request in .delay(seconds: 0.1, then: .text("slow \(request.target)")) }
        defer { origin.stop() }
        var configuration = Self.configuration(.auto)
        configuration.upstream.maxConnectionsPerHost = 1
        let proxy = try ProxyHarness(configuration: configuration)
        let results = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let text = (try? RawClient(port: proxy.port).request(RawClient.get(origin.url("/w\(index)"))))?.text
            results.withLock { $0.append(text ?? "failed") }
        }
        #expect(results.withLock { $0 }.sorted() == (0..<4).map { "slow /w\($0)" })
        #expect(Set(origin.requests.map(\.connection)).count == 1)
    }

    @Test("upstream.max_idle_connections: the longest idle connection of any origin makes room; its origin opens anew")
    func idleLimitAcrossOrigins() throws {
        let first = try OriginServer { request in .text("first \(request.target)") }
        defer { first.stop() }
        let second = try OriginServer { request in .text("second \(request.target)") }
        defer { second.stop() }
        var configuration = Self.configuration(.auto)
        configuration.upstream.maxIdleConnections = 1
        let proxy = try ProxyHarness(configuration: configuration)
        // Each answer is read whole before the next request: its connection is idle by then.
        for (origin, path, text) in [
            (first, "/a", "first /a"), (second, "/b", "second /b"), (second, "/c", "second /c"),
            (first, "/d", "first /d"),
        ] {
            #expect(try RawClient(port: proxy.port).request(RawClient.get(origin.url(path))).text == text)
        }
        // The second origin's idle connection pushed the first's out: the first opened another,
        // the second reused its own.
        #expect(Set(first.requests.map(\.connection)).count == 2)
        #expect(Set(second.requests.map(\.connection)).count == 1)
        #expect(proxy.stats.errors == 0)
    }

    @Test(
        "A chunked body larger than the socket buffers, to a client that starts reading late, arrives whole with its end",
        arguments: Configuration.UpstreamEngine.allCases)
    func chunkedEndWhileBehind(engine: Configuration.UpstreamEngine) throws {
        let piece = [UInt8](repeating: UInt8(ascii: "c"), count: 1024 * 1024)
        // The last chunk is small: its data and the last-chunk line arrive in one read.
        let chunks = Array(repeating: piece, count: 8) + [Array("tail".utf8)]
        let origin = try OriginServer { _ in .chunked(status: 200, headers: [], chunks: chunks) }
        defer { origin.stop() }
        var configuration = Self.configuration(engine)
        // The head timeout catches a connection returned unreadable (the next request's head
        // never comes); the idle one stays long: a test process loaded by the whole suite may
        // read 8 MiB slowly enough for libcurl's low-speed check (1 B/s over the idle time: a
        // CI run where this test took 90 s was cut at 30 s).
        configuration.timeouts.upstreamIdle = 180_000
        configuration.timeouts.upstreamResponse = 3000
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port, timeout: 20)
        try client.send(RawClient.get(origin.url("/chunked")))
        Thread.sleep(forTimeInterval: 1)  // the proxy holds the origin back meanwhile
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        let body = try client.reader.readChunked()
        #expect(body.count == 8 * piece.count + 4)
        #expect(body.suffix(4) == Array("tail".utf8))
        #expect(proxy.stats.errors == 0)
        // The origin's connection, whose reading paused with the body's end held, goes back to
        // the pool readable: the next request on it is answered (it used to wait for the timeout).
        let next = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/next")))
        #expect(next.status == 200 && next.body.count == 8 * piece.count + 4, "\(engine): \(next.status)")
    }

    @Test("Over TLS, a response head spread over several TLS records is read whole", arguments: [8, 40])
    func headAcrossTLSRecords(fields: Int) throws {
        let setup = try InterceptionTests.Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try setup.configuration(connectPort: origin.port))
        let response = try InterceptionTests.curl(
            origin.url("/wide?n=\(fields)"), proxy: proxy.port, cacert: setup.caCert)
        #expect(response.status == 200 && response.body == "wide", "\(response.status) \(response.body)")
        #expect(response.headers["x-pad-\(fields - 1)"]?.count == 1000)
        #expect(proxy.stats.upstreamNativeTransfers == 1)
    }

    @Test("Timings and Cache-Status are the same whichever transport ran")
    func sameFaceBothWays() throws {
        let origin = try OriginServer { _ in .text("same", headers: [("Cache-Control", "max-age=60")]) }
        defer { origin.stop() }
        var heads: [[String]] = []
        for engine in Configuration.UpstreamEngine.allCases {
            let proxy = try ProxyHarness(configuration: Self.configuration(engine))
            let miss = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/same")))
            let hit = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/same")))
            #expect(miss.text == "same" && hit.text == "same")
            heads.append([miss.header("cache-status") ?? "", hit.header("cache-status") ?? ""])
        }
        // The hit's ttl counts whole seconds from the store: a second may have passed between
        // one transport's store and hit and not the other's.
        let ttl = try Regex("ttl=(59|60)$")
        let same = heads.map { $0.map { $0.replacing(ttl, with: "ttl=60") } }
        #expect(same[0] == same[1] && heads.allSatisfy { $0[1].contains(ttl) }, "\(heads)")
    }

    @Test(
        "Bytes an origin sends beyond a large body's end never reach the next request on its connection",
        arguments: Configuration.UpstreamEngine.allCases)
    func strayBytesAfterLargeBody(engine: Configuration.UpstreamEngine) throws {
        let body = [UInt8](repeating: 0x61, count: 300_000)
        let answer = Array("HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        let stray = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nEVIL!".utf8)
        let origin = try OriginServer { request in
            request.target == "/a" ? .delay(seconds: 0.3, then: .rawKeepAlive(answer + body + stray)) : .text("fine")
        }
        defer { origin.stop() }
        var configuration = Self.configuration(engine)
        configuration.upstream.maxConnectionsPerHost = 1  // /b waits for /a's connection
        let proxy = try ProxyHarness(configuration: configuration)
        // /a on a thread of its own; /b once /a reached the origin (its answer is 0.3 s away), so
        // /b waits for /a's connection and is handed it the moment /a's body ended.
        let first = Locked<ReceivedResponse?>(nil)
        let firstDone = DispatchSemaphore(value: 0)
        Thread {
            first.withLock { $0 = try? RawClient(port: proxy.port).request(RawClient.get(origin.url("/a"))) }
            firstDone.signal()
        }.start()
        _ = eventually { origin.requests.contains { $0.target == "/a" } }
        let b = try? RawClient(port: proxy.port).request(RawClient.get(origin.url("/b")))
        #expect(firstDone.wait(timeout: .now() + 10) == .success)
        let a = first.withLock { $0 }
        let whole = a?.body == body
        #expect(a?.status == 200 && whole, "\(engine): \(a?.body.count ?? -1) bytes")
        #expect(b?.status == 200 && b?.text == "fine", "\(engine): \(b?.text ?? "none")")
        // The native transport moved /a's body in the kernel: the stray bytes stayed in the socket.
        let stats = proxy.stats
        #expect(stats.upstreamSplicedBodies == (stats.upstreamNativeTransfers > 0 ? 1 : 0))
    }

    @Test("A large pass-through body moves socket to socket in the kernel, whole and counted; a stored one is read")
    func splicedBodies() throws {
        let size = 3 << 20
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let origin = try OriginServer { request in
            switch request.target {
            case "/stored": .respond(status: 200, headers: [("Cache-Control", "max-age=60")], body: body)
            case "/small":
                .respond(status: 200, headers: [("Cache-Control", "no-store")], body: Array(body[0..<100_000]))
            default: .respond(status: 200, headers: [("Cache-Control", "no-store")], body: body)
            }
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: Self.configuration(.auto))
        let client = try RawClient(port: proxy.port)
        // Twice on one client connection: the origin's connection goes back to the pool after each.
        for _ in 0..<2 {
            let response = try client.request(RawClient.get(origin.url("/pass")))
            #expect(response.status == 200 && response.header("content-length") == "\(size)")
            let whole = response.body == body
            #expect(whole, "\(response.body.count) bytes")
        }
        var stats = proxy.stats
        #expect(stats.upstreamSplicedBodies == 2)
        // All but what arrived with the head (at most a read's worth) went through the kernel.
        #expect(stats.upstreamSplicedBytes > 2 * Int64(size - 256 * 1024), "\(stats.upstreamSplicedBytes)")
        #expect(stats.upstreamConnections == 1)
        // A body below the threshold is read; one that is stored is read (the cache keeps it), and
        // its hit is whole.
        let small = try client.request(RawClient.get(origin.url("/small"))).body == Array(body[0..<100_000])
        let stored = try client.request(RawClient.get(origin.url("/stored"))).body == body
        let hit = try client.request(RawClient.get(origin.url("/stored")))
        let hitWhole = hit.body == body
        #expect(small && stored && hitWhole)
        #expect(hit.header("cache-status")?.contains("hit") == true)
        stats = proxy.stats
        #expect(stats.upstreamSplicedBodies == 2)
        #expect(stats.upstreamConnections == 1)
    }
}
