import Foundation
import Sluice
import SluiceTestKit
import Testing

@Suite("Errors: every failure gets one status, a problem body and one log line")
struct ErrorTests {
    static func problemType(_ response: ReceivedResponse) -> String? {
        guard response.header("content-type") == "application/problem+json",
            let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        else { return nil }
        return (object["type"] as? String).map { String($0.dropFirst(Problem.typeBase.count)) }
    }

    @Test(
        "Malformed and oversized requests get their status and the connection is closed",
        arguments: [
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
            ("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\nabcd", 400),
            ("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\nHost: h\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost : h\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET http://h/ HTTP/3.0\r\nHost: h\r\n\r\n", 505),
            ("GET  http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("POST http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            ("POST http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
            ("POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("GET http://user:pw@h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET ftp://h/x HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("PUT http://h/ HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx", 417),
        ])
    func malformedRequests(request: String, status: Int) throws {
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(request)
        #expect(response.status == status)
        #expect(Self.problemType(response) != nil)
        if status != 400 || !request.contains("ftp://") && !request.contains("user:pw") {
            #expect(client.isClosedByPeer())
        }
    }

    @Test("Bad chunk framing in a request body is refused and nothing half-sent looks complete")
    func badChunkSize() throws {
        let origin = try OriginServer { request in .text("got \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(
            "POST \(origin.url("/")) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
        #expect(response.status == 400)
        #expect(client.isClosedByPeer())
    }

    @Test("Request line over 8 KiB is 414, header section over 64 KiB is 431, body over the limit is 413")
    func sizeLimits() throws {
        var configuration = Configuration()
        configuration.limits.maxRequestBody = 1000
        let proxy = try ProxyHarness(configuration: configuration)
        let long = try RawClient(port: proxy.port)
        let line = try long.request("GET http://h/\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(line.status == 414)
        let big = try RawClient(port: proxy.port)
        let fields = (0..<700).map { "X-Field-\($0): \(String(repeating: "v", count: 100))\r\n" }.joined()
        let headers = try big.request("GET http://h/ HTTP/1.1\r\nHost: h\r\n\(fields)\r\n")
        #expect(headers.status == 431)
        let body = try RawClient(port: proxy.port)
        let tooLarge = try body.request(
            "POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
        #expect(tooLarge.status == 413)
        #expect(Self.problemType(tooLarge) == "body-too-large")
        // Its log line names the request (the head was refused before any exchange began); the
        // 414's, whose line never arrived whole, does not.
        #expect(eventually { proxy.logLines.all.contains { $0.contains("\"POST http://h/\" 413") } })
        #expect(proxy.logLines.all.contains { $0.contains("\"- -\" 414") }, "\(proxy.logLines.all)")
        let chunked = try RawClient(port: proxy.port)
        let origin = try OriginServer { request in .text("\(request.body.count)") }
        defer { origin.stop() }
        try chunked.send("POST \(origin.url("/")) HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n")
        try chunked.send(String(repeating: "z", count: 0x800) + "\r\n0\r\n\r\n")
        let overLimit = try chunked.reader.readResponse()
        #expect(overLimit.status == 413)
    }

    @Test("An origin-form request gets 400 with a problem that explains how to use a proxy")
    func originForm() throws {
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request("GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(response.status == 400)
        #expect(Self.problemType(response) == "not-a-proxy-request")
        #expect(response.text.contains("curl -x"))
    }

    @Test("DNS failure and refused connections are 502 with their problem types, logged once")
    func upstreamUnreachable() throws {
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let dns = try client.request(RawClient.get("http://no-such-host.invalid/"))
        #expect(dns.status == 502)
        #expect(Self.problemType(dns) == "upstream-dns-failure")
        // A port nothing listens on: bind one and close it.
        let closed = try TestListener()
        let port = closed.port
        closed.closeUnused()
        let refused = try client.request(RawClient.get("http://127.0.0.1:\(port)/"))
        #expect(refused.status == 502)
        #expect(Self.problemType(refused) == "upstream-connect-failure")
        // The line is written right after the response leaves: wait for it, then expect exactly two.
        _ = proxy.waitUntil { proxy.logLines.all.filter { $0.contains("problem=") }.count >= 2 }
        #expect(settled { proxy.logLines.all.count } != nil)
        let lines = proxy.logLines.all.filter { $0.contains("problem=") }
        #expect(lines.count == 2, "\(proxy.logLines.all)")
        #expect(lines.allSatisfy { $0.hasPrefix("warning") })
    }

    @Test("An origin that does not answer in time gives 504")
    func upstreamTimeout() throws {
        var configuration = Configuration()
        configuration.timeouts.upstreamResponse = 300
        let origin = try OriginServer { _ in .delay(seconds: 2, then: .text("late")) }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/slow")))
        #expect(response.status == 504)
        #expect(Self.problemType(response) == "upstream-timeout")
    }

    @Test("upstream_response counts from the request sent: an upload that moves, slower than it in all, is no timeout")
    func slowUploadIsNoUpstreamTimeout() throws {
        var configuration = Configuration()
        configuration.timeouts.upstreamResponse = 400
        let origin = try OriginServer { request in .text("got \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        try client.send(
            "POST \(origin.url("/upload")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 8\r\n\r\n")
        // Eight bytes over 2 s: a byte every 250 ms (each within the 400 ms).
        for _ in 0..<8 {
            Thread.sleep(forTimeInterval: 0.25)
            try client.send("x")
        }
        let response = try client.reader.readResponse()
        #expect(response.status == 200 && response.text == "got 8", "\(response.status) \(response.text)")
        // Once the request is whole, the wait for the head counts.
        let late = try OriginServer { _ in .delay(seconds: 2, then: .text("late")) }
        defer { late.stop() }
        let slow = try RawClient(port: proxy.port)
        let refused = try slow.request(
            "POST \(late.url("/upload")) HTTP/1.1\r\nHost: 127.0.0.1:\(late.port)\r\nContent-Length: 2\r\n\r\nok",
            method: "POST")
        #expect(refused.status == 504 && Self.problemType(refused) == "upstream-timeout")
    }

    @Test("A request body that stops coming gets a 408 (client_body), and the connection closes")
    func stalledRequestBody() throws {
        var configuration = Configuration()
        configuration.timeouts.clientBody = 400
        let origin = try OriginServer { request in .text("got \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        try client.send(
            "POST \(origin.url("/upload")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 100\r\n\r\nabc"
        )
        let response = try client.reader.readResponse()
        #expect(response.status == 408 && Self.problemType(response) == "request-timeout", "\(response.text)")
        #expect(response.header("connection") == "close")
        #expect(try client.reader.readToEnd().isEmpty && client.reader.atEnd)
        #expect(origin.requests.isEmpty, "the origin never got a whole request")
        // Its transfer ended with it (not left paused, holding the origin's connection).
        #expect(proxy.waitUntil { proxy.onLoop { $0.session.activeTaskCount } == 0 })
        #expect(
            proxy.waitUntil { proxy.logLines.all.contains { $0.contains(" 408 ") && $0.contains("request-timeout") } })
    }

    @Test(
        "A request body that stops coming is the client's stall (408) even when upstream_response is shorter; with client_body 0 the origin's wait ends it (504)"
    )
    func stalledBodyIsTheClients() throws {
        let origin = try OriginServer { request in .text("got \(request.body.count)") }
        defer { origin.stop() }
        let upload =
            "POST \(origin.url("/upload")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 100\r\n\r\nabc"
        for (clientBody, status, type) in [(1_200, 408, "request-timeout"), (0, 504, "upstream-timeout")] {
            var configuration = Configuration()
            configuration.timeouts.upstreamResponse = 300
            configuration.timeouts.clientBody = clientBody
            let proxy = try ProxyHarness(configuration: configuration)
            let client = try RawClient(port: proxy.port)
            let started = Date()
            try client.send(upload)
            let response = try client.reader.readResponse()
            let waited = Date().timeIntervalSince(started)
            #expect(response.status == status && Self.problemType(response) == type, "\(clientBody): \(response.text)")
            // The 408 came at client_body's time, not at upstream_response's.
            if status == 408 { #expect(waited > 1.0, "\(waited)") }
            #expect(proxy.waitUntil { proxy.onLoop { $0.session.activeTaskCount } == 0 })
        }
        #expect(origin.requests.isEmpty, "the origin never got a whole request")
    }

    @Test("An origin reset after the headers closes the client connection; the body is visibly short")
    func resetAfterHeaders() throws {
        let origin = try OriginServer { _ in .resetMidBody(declared: 100_000, sent: 1000) }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/reset")))
        guard let head = try client.reader.readHead() else { throw TestError("no head") }
        if head.startLine.hasPrefix("HTTP/1.1 502") {
            // The reset arrived before any body byte: nothing was sent yet, so the client gets a problem.
            #expect(head.fields.contains { $0.0 == "Content-Type" && $0.1 == "application/problem+json" })
            return
        }
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        // The declared length cannot be met: the client sees the connection end early.
        let rest = try client.reader.readToEnd()
        #expect(rest.count < 100_000)
        #expect(client.reader.atEnd)
    }

    @Test("An origin reset before any byte of the response is a 502")
    func resetBeforeResponse() throws {
        let origin = try OriginServer { _ in .close }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/")))
        #expect(response.status == 502)
        #expect(Self.problemType(response) == "upstream-bad-response")
    }

    @Test("A garbage status line from the origin is a 502")
    func garbageResponse() throws {
        let origin = try OriginServer { _ in .raw(Array("NOT HTTP AT ALL\r\n\r\n".utf8)) }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/")))
        #expect(response.status == 502)
    }
}
