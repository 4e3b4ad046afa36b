import Foundation
import Sluice
import SluiceTestKit
import Testing

@Suite("Forwarding through the proxy")
struct ForwardingTests {
    @Test("GET, HEAD, POST, PUT and DELETE reach the origin and their answers reach the client")
    func methodsRoundTrip() throws {
        // Given an origin that echoes method and body
        let origin = try OriginServer { request in
            .text("\(request.method) \(request.target) body=\(String(decoding: request.body, as: UTF8.self))")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)

        // When each method is sent on one connection
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            let body = method == "GET" || method == "DELETE" ? "" : "payload-\(method)"
            let framing = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
            let response = try client.request(
                "\(method) \(origin.url("/m")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(framing)\r\n\(body)")
            // Then the origin saw the method and body, and the client got the answer
            #expect(response.status == 200)
            #expect(response.text == "\(method) /m body=\(body)")
            #expect(response.header("via") == "1.1 sluice")
        }
        let head = try client.request(
            "HEAD \(origin.url("/h")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.header("content-length") == String("HEAD /h body=".utf8.count))
        #expect(head.body.isEmpty)
        #expect(origin.requests.last?.method == "HEAD")
    }

    @Test("A chunked request body streams upstream and arrives whole")
    func chunkedRequestBody() throws {
        let origin = try OriginServer { request in
            .text("got \(request.body.count) bytes: \(String(decoding: request.body, as: UTF8.self))")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(
            "POST \(origin.url("/c")) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer-Field: x\r\n\r\n"
        )
        #expect(response.status == 200)
        #expect(response.text == "got 11 bytes: hello world")
    }

    @Test(
        "Expect: 100-continue goes to the origin, whose 100 Continue reaches the client once, before the body (libcurl's path: Sluice's own)"
    )
    func expectContinue() throws {
        let origin = try OriginServer { request in .text("len=\(request.body.count)") }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.timeouts.upstreamContinue = 30_000  // Sluice's own 100 would come too late
        let proxy = try ProxyHarness(configuration: configuration)
        let forwarded = proxy.upstreamEngine == .auto
        let client = try RawClient(port: proxy.port)
        // When the client sends the head only
        try client.send(
            "PUT \(origin.url("/u")) HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        // Then it receives the origin's 100 Continue, and after the body the final response
        let interim = try client.reader.readHead()
        #expect(interim?.startLine == "HTTP/1.1 100 Continue")
        // The origin's, passed on (with Via), not Sluice's own (which has none, and would come
        // only after timeouts.upstream_continue)
        #expect(interim?.fields.contains { $0.0.lowercased() == "via" } == forwarded, "\(interim?.fields ?? [])")
        try client.send("abcd")
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"), "one 100, then the answer: \(head.startLine)")
        #expect(String(decoding: try client.reader.readExactly(5), as: UTF8.self) == "len=4")
        #expect(origin.requests.first?.header("expect") == (forwarded ? "100-continue" : nil))
        // The connection goes on: a second upload on it, its body sent with the head
        try client.send(
            "PUT \(origin.url("/u")) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nab")
        let second = try client.reader.readResponse()
        #expect(second.status == 200)
        #expect(second.text == "len=2")
    }

    @Test("An origin that refuses an upload from its head answers the client before any body is sent")
    func expectContinueRefused() throws {
        // Given an origin that answers 401 to the head alone, never reading the body
        let origin = try OriginServer(expectation: .answerFromHead) { request in
            request.method == "GET" ? .text("ok") : .respond(status: 401, headers: [], body: Array("log in".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let forwarded = proxy.upstreamEngine == .auto
        for framing in ["Content-Length: 100000", "Transfer-Encoding: chunked"] {
            let client = try RawClient(port: proxy.port)
            try client.send(
                "POST \(origin.url("/upload")) HTTP/1.1\r\nHost: x\r\n\(framing)\r\nExpect: 100-continue\r\n\r\n")
            if !forwarded {
                // libcurl carries it: Sluice answers the expectation itself, and the body goes
                #expect(try client.reader.readHead()?.startLine == "HTTP/1.1 100 Continue")
                try client.send(framing.hasPrefix("Content") ? String(repeating: "x", count: 100_000) : "0\r\n\r\n")
                #expect(try client.reader.readResponse().status == 401)
                continue
            }
            // Then the first answer is the origin's 401: no 100 came, so the body never left the client
            let head = try #require(try client.reader.readHead())
            #expect(head.startLine.hasPrefix("HTTP/1.1 401"), "\(framing): \(head.startLine)")
            // and the connection, whose request body was never read, closes after it, as it says
            #expect(head.fields.contains { $0.0.lowercased() == "connection" && $0.1 == "close" })
            #expect(client.isClosedByPeer())
        }
        if forwarded { #expect(origin.requests.allSatisfy { $0.header("expect") == "100-continue" }) }
        // A request after the refusal finds the origin as before (no connection was left half-sent)
        let after = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/after")))
        #expect(after.text == "ok")
    }

    @Test(
        "An origin that answers while the request body is still coming: the answer says Connection: close, and the connection closes after it"
    )
    func earlyAnswer() throws {
        let origin = try OriginServer(expectation: .answerBeforeBody) { _ in .text("early") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        try client.send(
            "POST \(origin.url("/upload")) HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                + String(repeating: "x", count: 1000))
        let response = try client.reader.readResponse()
        #expect(response.status == 200 && response.text == "early")
        #expect(response.header("connection") == "close", "\(response.headers)")
        // (Through libcurl the rest of the body is still read and sent: its transfer ends with it.)
        if proxy.upstreamEngine == .auto { #expect(client.isClosedByPeer()) }
        // The next client finds the origin as before.
        let after = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/after")))
        #expect(after.text == "early")
    }

    @Test(
        "An origin that answers the expectation with 417 gets the request again without it; the client never sees the 417"
    )
    func expectContinueRefusedWith417() throws {
        // Given an origin (or a hop before it) that supports no expectations
        let origin = try OriginServer(expectation: .answerFromHead) { request in
            request.header("expect") != nil
                ? .respond(status: 417, headers: [], body: Array("no expectations".utf8))
                : .text("len=\(request.body.count)")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let forwarded = proxy.upstreamEngine == .auto
        let client = try RawClient(port: proxy.port)
        try client.send(
            "PUT \(origin.url("/u")) HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        // Then the client gets Sluice's own 100, sends its body, and gets the answer to it
        let interim = try client.reader.readHead()
        #expect(interim?.startLine == "HTTP/1.1 100 Continue")
        try client.send("abcd")
        let response = try client.reader.readResponse()
        #expect(response.status == 200 && response.text == "len=4")
        // and the origin saw the expectation once, then the request without it, whole
        #expect(origin.requests.map { $0.header("expect") } == (forwarded ? ["100-continue", nil] : [nil]))
        #expect(origin.requests.last?.body == Array("abcd".utf8))
    }

    @Test(
        "An origin that ignores the expectation gets the body after timeouts.upstream_continue, and the client Sluice's 100"
    )
    func expectContinueIgnored() throws {
        let origin = try OriginServer(expectation: .ignore) { request in .text("len=\(request.body.count)") }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.timeouts.upstreamContinue = 300
        let proxy = try ProxyHarness(configuration: configuration)
        let forwarded = proxy.upstreamEngine == .auto
        let client = try RawClient(port: proxy.port)
        let started = Date()
        try client.send(
            "PUT \(origin.url("/u")) HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        // Then, the origin silent, Sluice says 100 itself once the wait is over
        let interim = try client.reader.readHead()
        #expect(interim?.startLine == "HTTP/1.1 100 Continue")
        if forwarded { #expect(Date().timeIntervalSince(started) >= 0.25) }
        try client.send("abcd")
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"), "\(head.startLine)")
        #expect(String(decoding: try client.reader.readExactly(5), as: UTF8.self) == "len=4")
        #expect(origin.requests.first?.header("expect") == (forwarded ? "100-continue" : nil))
    }

    @Test("timeouts.upstream_continue: 0 keeps the expectation to Sluice: its own 100, no Expect upstream")
    func expectContinueAnsweredLocally() throws {
        let origin = try OriginServer { request in .text("len=\(request.body.count)") }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.timeouts.upstreamContinue = 0
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        try client.send(
            "PUT \(origin.url("/u")) HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.reader.readHead()?.startLine == "HTTP/1.1 100 Continue")
        try client.send("abcd")
        let response = try client.reader.readResponse()
        #expect(response.text == "len=4")
        #expect(origin.requests.first?.header("expect") == nil)
    }

    @Test(
        "An HTTP/1.0 client's Expect: 100-continue is ignored: no 1xx, the body is read and answered (RFC 9110 §10.1.1)"
    )
    func expectContinueFromHTTP10() throws {
        let origin = try OriginServer { request in .text("len=\(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        for withBody in [false, true] {
            let client = try RawClient(port: proxy.port)
            try client.send(
                "PUT \(origin.url("/u")) HTTP/1.0\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"
                    + (withBody ? "abcd" : ""))
            if !withBody {
                Thread.sleep(forTimeInterval: 0.2)
                try client.send("abcd")
            }
            // The first head is the answer (`readResponse` would skip a 100 Continue).
            let head = try #require(try client.reader.readHead())
            #expect(head.startLine.hasPrefix("HTTP/1.1 200"), "body with the head: \(withBody): \(head.startLine)")
            let length = head.fields.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
            #expect(String(decoding: try client.reader.readExactly(length), as: UTF8.self) == "len=4")
        }
    }

    @Test("Interim responses (103, 102) reach HTTP/1.1 clients before the final one, at most eight of them")
    func interimResponses() throws {
        // Given an origin that sends Early Hints, Processing and its own 100 before the answer
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nCache-Control: no-store\r\n\r\nok"
        let hints =
            "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nConnection: x-hop\r\nX-Hop: 1\r\nContent-Length: 0\r\n\r\n"
        let origin = try OriginServer { request in
            switch request.target {
            case "/hints":
                .raw(Array((hints + "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n" + final).utf8))
            default: .raw(Array((String(repeating: "HTTP/1.1 103 Early Hints\r\n\r\n", count: 20) + final).utf8))
            }
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        func heads(_ path: String, version: String) throws -> [(startLine: String, fields: [(String, String)])] {
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url(path)) HTTP/\(version)\r\nHost: x\r\n\r\n")
            var heads: [(startLine: String, fields: [(String, String)])] = []
            while let head = try client.reader.readHead() {
                heads.append(head)
                if !head.startLine.contains(" 1") || head.startLine.contains(" 200 ") { break }
            }
            #expect(String(decoding: try client.reader.readExactly(2), as: UTF8.self) == "ok")
            return heads
        }
        // When an HTTP/1.1 client asks
        let passed = try heads("/hints", version: "1.1")
        // Then it gets 103 (hop-by-hop fields and Content-Length gone, Via added) and 102, not the origin's 100, then 200
        #expect(
            passed.map { $0.startLine } == ["HTTP/1.1 103 Early Hints", "HTTP/1.1 102 Processing", "HTTP/1.1 200 OK"])
        let early = passed[0].fields.map { "\($0.0.lowercased()): \($0.1)" }
        #expect(early == ["link: </a.css>; rel=preload", "via: 1.1 sluice"])
        // An HTTP/1.0 client gets none (RFC 9110 §15.2), and a flood is cut at eight.
        #expect(try heads("/hints", version: "1.0").map { $0.startLine } == ["HTTP/1.1 200 OK"])
        let flood = try heads("/flood", version: "1.1")
        #expect(flood.count == 8 + 1)
        #expect(flood.last?.startLine == "HTTP/1.1 200 OK")
    }

    @Test("Hop-by-hop fields go no further in either direction and Via is added")
    func hopByHopFields() throws {
        let origin = try OriginServer { _ in
            .respond(
                status: 200,
                headers: [
                    ("Connection", "X-Secret-Hop"), ("X-Secret-Hop", "1"), ("Keep-Alive", "timeout=5"),
                    ("Via", "1.1 upstream"), ("X-End", "e"),
                ], body: Array("ok".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(
            "GET \(origin.url("/p")) HTTP/1.1\r\nHost: ignored.example\r\nConnection: X-Client-Hop\r\nX-Client-Hop: 1\r\n"
                + "Proxy-Authorization: Basic abc\r\nProxy-Connection: keep-alive\r\nTE: trailers\r\nX-End: e\r\n\r\n")
        let seen = try #require(origin.requests.first)
        // Then the origin saw no hop-by-hop field, Host from the URI, and Via
        #expect(seen.header("x-client-hop") == nil)
        #expect(seen.header("proxy-authorization") == nil)
        #expect(seen.header("proxy-connection") == nil)
        #expect(seen.header("te") == nil)
        #expect(seen.header("connection") == nil)
        #expect(seen.header("host") == "127.0.0.1:\(origin.port)")
        #expect(seen.header("via") == "1.1 sluice")
        #expect(seen.header("x-end") == "e")
        #expect(seen.header("accept") == nil)
        // And the client saw none of the origin's hop-by-hop fields
        #expect(response.header("x-secret-hop") == nil)
        #expect(response.header("keep-alive") == nil)
        #expect(response.header("via") == "1.1 upstream, 1.1 sluice")
        #expect(response.header("x-end") == "e")
    }

    @Test("Field values that are not UTF-8 pass byte for byte both ways, and from the cache (RFC 9110 §5.5)")
    func opaqueFieldValues() throws {
        // Given an origin whose Content-Disposition names a file in ISO-8859-1, as old servers do
        let disposition = Array("Content-Disposition: attachment; filename=\"caf".utf8) + [0xE9] + Array(".txt\"".utf8)
        let origin = try OriginServer { _ in
            .raw(
                Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nCache-Control: max-age=60\r\n".utf8) + disposition
                    + Array("\r\n\r\nok".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let sent = Array("X-Name: na".utf8) + [0xEF] + Array("ve".utf8)
        for expected in ["fwd=uri-miss", "hit"] {
            // When a client whose own field is not UTF-8 asks for it, then again
            let client = try RawClient(port: proxy.port)
            try client.socket.send(
                Array("GET \(origin.url("/latin1")) HTTP/1.1\r\nHost: x\r\n".utf8) + sent + Array("\r\n\r\n".utf8))
            let head = try #require(try client.reader.readHead())
            // Then both answers hold the origin's bytes, the second from the cache
            #expect(client.reader.lastHead.firstRange(of: disposition) != nil)
            #expect(head.fields.contains { $0.0 == "Cache-Status" && $0.1.contains(expected) })
            #expect(try client.reader.readExactly(2) == Array("ok".utf8))
        }
        // And the origin got the client's bytes
        #expect(origin.requests.count == 1)
        #expect(origin.requests.first?.head.firstRange(of: sent) != nil)
    }

    @Test("A stored ETag that is not UTF-8 revalidates with its own bytes, and the 304 freshens it")
    func opaqueEntityTag() throws {
        // Given an origin whose tag holds an ISO-8859-1 byte (RFC 9110 §8.8.3: etagc allows obs-text)
        let tag = Array("ETag: \"v".utf8) + [0xE9] + Array("\"".utf8)
        let condition = Array("If-None-Match: \"v".utf8) + [0xE9] + Array("\"".utf8)
        let origin = try OriginServer { request in
            let matches = request.head.firstRange(of: condition) != nil
            return .raw(
                Array((matches ? "HTTP/1.1 304 Not Modified\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n").utf8)
                    + Array("Cache-Control: max-age=0, must-revalidate\r\n".utf8) + tag
                    + Array((matches ? "\r\n\r\n" : "\r\n\r\nok").utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        // When it is fetched, then asked for again once stale
        for _ in 0..<2 {
            let client = try RawClient(port: proxy.port)
            let response = try client.request(RawClient.get(origin.url("/tag")))
            #expect(response.status == 200 && response.text == "ok")
        }
        // Then the second request carried the tag's bytes, and the origin answered 304
        #expect(origin.requests.count == 2)
        #expect(origin.requests.last?.head.firstRange(of: condition) != nil)
        // And a client's own condition with those bytes gets a 304 that names the tag as it was sent
        let client = try RawClient(port: proxy.port)
        try client.socket.send(
            Array("GET \(origin.url("/tag")) HTTP/1.1\r\nHost: x\r\n".utf8) + condition + Array("\r\n\r\n".utf8))
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 304"))
        #expect(client.reader.lastHead.firstRange(of: tag) != nil)
        // The same text in UTF-8 is other bytes: another tag, so no 304.
        let other = try RawClient(port: proxy.port)
        try other.socket.send(
            Array("GET \(origin.url("/tag")) HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"v\u{e9}\"\r\n\r\n".utf8))
        let otherHead = try #require(try other.reader.readHead())
        #expect(otherHead.startLine.hasPrefix("HTTP/1.1 200"), "\(otherHead.startLine)")
    }

    @Test("Max-Forwards: 0 on OPTIONS and TRACE is answered by the proxy; otherwise decremented")
    func maxForwards() throws {
        let origin = try OriginServer { request in .text("mf=\(request.header("max-forwards") ?? "none")") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let local = try client.request("OPTIONS \(origin.url("/")) HTTP/1.1\r\nHost: x\r\nMax-Forwards: 0\r\n\r\n")
        #expect(local.status == 200)
        #expect(local.header("allow") != nil)
        let trace = try client.request(
            "TRACE \(origin.url("/t")) HTTP/1.1\r\nHost: x\r\nMax-Forwards: 0\r\nX-Probe: 7\r\n\r\n")
        #expect(trace.header("content-type") == "message/http")
        #expect(trace.text.contains("X-Probe: 7"))
        #expect(origin.requests.isEmpty)
        let forwarded = try client.request("OPTIONS \(origin.url("/")) HTTP/1.1\r\nHost: x\r\nMax-Forwards: 3\r\n\r\n")
        #expect(forwarded.text == "mf=2")
    }

    @Test("OPTIONS for a URL without a path goes upstream as OPTIONS *; other targets keep their path")
    func optionsAsterisk() throws {
        // Given an origin that echoes its request line
        let origin = try OriginServer { request in .text("\(request.method) \(request.target)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let authority = "127.0.0.1:\(origin.port)"
        // When OPTIONS names the server itself (no path, no query), then a resource, then the
        // same path-less URL with GET, all on one connection (one reused upstream handle)
        let server = try client.request("OPTIONS http://\(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n")
        let resource = try client.request("OPTIONS http://\(authority)/ HTTP/1.1\r\nHost: \(authority)\r\n\r\n")
        let query = try client.request("OPTIONS http://\(authority)?q HTTP/1.1\r\nHost: \(authority)\r\n\r\n")
        let get = try client.request("GET http://\(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n")
        // Then only the first is asterisk-form upstream (RFC 9112 §3.2.4)
        #expect(server.text == "OPTIONS *")
        #expect(resource.text == "OPTIONS /")
        #expect(query.text == "OPTIONS /?q")
        #expect(get.text == "GET /")
    }

    @Test("The path and query reach the origin exactly as the client sent them (no dot-segment removal)")
    func pathAsIs() throws {
        // Given an origin that echoes its request target
        let origin = try OriginServer { request in .text(request.target) }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        // When targets with dot-segments, doubled slashes and encoded dots are sent
        for target in ["/a/../b", "/a/./c", "/x/%2e%2e/y", "//d//e", "/f?g=../h", "/i/.."] {
            let response = try client.request(RawClient.get(origin.url(target)))
            // Then the origin saw each one unchanged (RFC 9110 §7.7)
            #expect(response.text == target)
        }
    }

    @Test("A 204 or 1xx reaches the client without Content-Length, a 304 and HEAD keep theirs")
    func noContentLengthOn204() throws {
        // Given an origin that (wrongly) sends Content-Length with a 204
        let origin = try OriginServer { request in
            switch request.target {
            case "/204": return .raw(Array("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\nX-A: 1\r\n\r\n".utf8))
            case "/304":
                return .raw(Array("HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\nContent-Length: 7\r\n\r\n".utf8))
            default: return .text("hello")
            }
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        // When each is fetched
        let noContent = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/204")))
        let notModified = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/304")), method: "HEAD")
        let head = try RawClient(port: proxy.port).request(
            "HEAD \(origin.url("/h")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n", method: "HEAD")
        // Then the 204 lost its Content-Length (RFC 9110 §8.6) and nothing else
        #expect(noContent.status == 204)
        #expect(noContent.header("content-length") == nil)
        #expect(noContent.header("x-a") == "1")
        #expect(noContent.body.isEmpty)
        #expect(notModified.status == 304)
        #expect(notModified.header("content-length") == "7")
        #expect(head.header("content-length") == "5")
    }

    @Test("A chunked origin response is re-chunked for HTTP/1.1 and close-delimited for HTTP/1.0")
    func responseFraming() throws {
        let origin = try OriginServer { _ in
            .chunked(status: 200, headers: [], chunks: [Array("ab".utf8), Array("cdef".utf8)])
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let modern = try client.request(RawClient.get(origin.url("/c")))
        #expect(modern.header("transfer-encoding") == "chunked")
        #expect(modern.text == "abcdef")
        let old = try RawClient(port: proxy.port)
        let legacy = try old.request("GET \(origin.url("/c")) HTTP/1.0\r\n\r\n")
        #expect(legacy.header("transfer-encoding") == nil)
        #expect(legacy.header("connection") == "close")
        #expect(legacy.text == "abcdef")
    }

    @Test("curl -x works against the proxy")
    func realCurlClient() throws {
        let origin = try OriginServer { _ in .text("hello from origin") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let output = try runCurl(["-sS", "-x", "http://127.0.0.1:\(proxy.port)", origin.url("/curl")])
        #expect(output == "hello from origin")
    }
}

/// Runs the curl command-line client and returns its standard output.
func runCurl(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    for key in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
        environment.removeValue(forKey: key)
    }
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
