import Foundation
import Sluice
import SluiceTestKit
import Testing

/// Hostile request framing (request smuggling, header injection, oversize): each gets its status
/// and a problem body, the connection is closed, the origin never receives a complete request, and
/// the proxy serves the next client. `{U}` is the origin's URL, `{H}` its Host field.
@Suite("Adversarial: request framing")
struct RequestFramingTests {
    static let refused: [(String, String, Int)] = [
        ("CL then TE", "POST {U} HTTP/1.1\r\n{H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("TE then CL", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 400),
        ("TE with space before colon", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),
        ("TE xchunked", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 400),
        ("TE chunked, identity", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400),
        (
            "TE twice",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400
        ),
        ("TE not ending in chunked", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: gzip\r\n\r\nabc", 400),
        ("TE in HTTP/1.0", "POST {U} HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("CL twice", "POST {U} HTTP/1.1\r\n{H}Content-Length: 2\r\nContent-Length: 2\r\n\r\nab", 400),
        ("CL list", "POST {U} HTTP/1.1\r\n{H}Content-Length: 2, 2\r\n\r\nab", 400),
        ("CL with sign", "POST {U} HTTP/1.1\r\n{H}Content-Length: +2\r\n\r\nab", 400),
        ("CL negative", "POST {U} HTTP/1.1\r\n{H}Content-Length: -1\r\n\r\nab", 400),
        ("CL hexadecimal", "POST {U} HTTP/1.1\r\n{H}Content-Length: 0x2\r\n\r\nab", 400),
        ("CL overflowing", "POST {U} HTTP/1.1\r\n{H}Content-Length: 99999999999999999999999\r\n\r\nab", 400),
        ("CL with inner space", "POST {U} HTTP/1.1\r\n{H}Content-Length: 1 2\r\n\r\nab", 400),
        (
            "chunk size overflowing",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nab\r\n0\r\n\r\n", 400
        ),
        ("chunk size negative", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n-2\r\nab\r\n0\r\n\r\n", 400),
        ("chunk size not hex", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", 400),
        (
            "chunk extension oversized",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2;\(String(repeating: "a", count: 70000))\r\nab\r\n0\r\n\r\n",
            400
        ),
        (
            "chunk extension invalid",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2;a\"b\r\nab\r\n0\r\n\r\n", 400
        ),
        (
            "chunk extension unterminated quote",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2;a=\"b\r\nab\r\n0\r\n\r\n", 400
        ),
        (
            "chunk data longer than size",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n", 400
        ),
        ("chunk lines ended by bare LF", "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2\nab\n0\n\n", 400),
        (
            "trailer without colon",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nbad trailer\r\n\r\n", 400
        ),
        (
            "trailer with obs-fold",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX: a\r\n b\r\n\r\n", 400
        ),
        (
            "trailer section oversized",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\((0..<100).map { "X-T\($0): \(String(repeating: "v", count: 1000))\r\n" }.joined())\r\n",
            400
        ),
        ("bare CR in a field", "GET {U} HTTP/1.1\r\n{H}X-A: a\rX-B: b\r\n\r\n", 400),
        ("bare LF ending the request line", "GET {U} HTTP/1.1\n{H}\r\n", 400),
        ("NUL in a value", "GET {U} HTTP/1.1\r\n{H}X-A: a\u{0}b\r\n\r\n", 400),
        ("obs-fold", "GET {U} HTTP/1.1\r\n{H}X-Folded: a\r\n b\r\n\r\n", 400),
        ("space inside a field name", "GET {U} HTTP/1.1\r\n{H}X Y: z\r\n\r\n", 400),
        ("space before the colon", "GET {U} HTTP/1.1\r\n{H}X-Y : z\r\n\r\n", 400),
        ("line without a colon", "GET {U} HTTP/1.1\r\n{H}NoColon\r\n\r\n", 400),
        ("whitespace before the first field", "GET {U} HTTP/1.1\r\n {H}\r\n", 400),
        ("missing Host", "GET {U} HTTP/1.1\r\n\r\n", 400),
        ("Host twice", "GET {U} HTTP/1.1\r\n{H}{H}\r\n", 400),
        ("control byte in the target", "GET {U}a\u{1}b HTTP/1.1\r\n{H}\r\n", 400),
        ("space in the target", "GET {U}a b HTTP/1.1\r\n{H}\r\n", 400),
        ("HTTP/0.9 request line", "GET {U}\r\n\r\n", 400),
        ("unknown major version", "GET {U} HTTP/2.0\r\n{H}\r\n", 505),
        ("request line over 8 KiB", "GET {U}\(String(repeating: "a", count: 9000)) HTTP/1.1\r\n{H}\r\n", 414),
        (
            "header section over 64 KiB",
            "GET {U} HTTP/1.1\r\n{H}\((0..<700).map { "X-F\($0): \(String(repeating: "v", count: 100))\r\n" }.joined())\r\n",
            431
        ),
        ("one field over 64 KiB", "GET {U} HTTP/1.1\r\n{H}X-Big: \(String(repeating: "v", count: 70000))\r\n\r\n", 431),
    ]

    static func expand(_ template: String, _ origin: OriginServer) -> String {
        template.replacingOccurrences(of: "{U}", with: origin.url("/"))
            .replacingOccurrences(of: "{H}", with: "Host: 127.0.0.1:\(origin.port)\r\n")
    }

    @Test(
        "Each is refused with its status and the connection closed; nothing complete reaches the origin",
        arguments: refused)
    func refusedFraming(name: String, template: String, status: Int) throws {
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        try? client.send(Self.expand(template, origin))
        let response = try client.reader.readResponse()
        #expect(response.status == status, "\(name)")
        #expect(ErrorTests.problemType(response) != nil, "\(name)")
        #expect(client.isClosedByPeer(), "\(name)")
        // Both connections are over (the client's, and the origin's when the body had been
        // forwarded in part) before what the origin received is looked at.
        #expect(proxy.waitUntil { proxy.stats.connectionsOpen == 0 && origin.openConnections == 0 }, "\(name)")
        #expect(origin.requests.isEmpty, "\(name): the origin received \(origin.requests.map(\.target))")
        // The proxy still serves the next client.
        let next = try RawClient(port: proxy.port)
        #expect(try next.request(RawClient.get(origin.url("/next"))).text == "origin", "\(name)")
    }

    @Test("A request smuggled behind an ambiguous body is never forwarded")
    func smuggledRequest() throws {
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        for template in [
            "POST {U} HTTP/1.1\r\n{H}Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET {U}smuggled HTTP/1.1\r\n{H}\r\n",
            "POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\nGET {U}smuggled HTTP/1.1\r\n{H}\r\n",
            "POST {U} HTTP/1.1\r\n{H}Content-Length: 0\r\nContent-Length: 45\r\n\r\nGET {U}smuggled HTTP/1.1\r\n{H}\r\n",
        ] {
            let client = try RawClient(port: proxy.port)
            try client.send(Self.expand(template, origin))
            #expect(try client.reader.readResponse().status == 400)
            #expect(client.isClosedByPeer())
        }
        #expect(proxy.waitUntil { proxy.stats.connectionsOpen == 0 && origin.openConnections == 0 })
        #expect(origin.requests.isEmpty)
    }

    @Test("Connection naming Content-Length, Transfer-Encoding or Host cannot unframe the forwarded request")
    func connectionNamesFramingFields() throws {
        let origin = try OriginServer { request in .text("\(request.header("host") ?? "-") \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let host = "127.0.0.1:\(origin.port)"
        let client = try RawClient(port: proxy.port)
        let length = try client.request(
            Self.expand("POST {U} HTTP/1.1\r\n{H}Connection: Content-Length\r\nContent-Length: 2\r\n\r\nab", origin))
        #expect(length.text == "\(host) 2")
        let chunked = try client.request(
            Self.expand(
                "POST {U} HTTP/1.1\r\n{H}Connection: Transfer-Encoding\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                origin))
        #expect(chunked.text == "\(host) 3")
        let named = try client.request(Self.expand("GET {U} HTTP/1.1\r\n{H}Connection: Host\r\n\r\n", origin))
        #expect(named.text == "\(host) 0")
        // A Host that disagrees with the absolute URI is replaced by the URI's authority (RFC 9112 §3.2.2).
        let spoofed = try client.request("GET \(origin.url("/")) HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        #expect(spoofed.text == "\(host) 0")
        // Each forwarded request was framed by the proxy: exactly these four arrived, bodies whole.
        #expect(origin.requests.map(\.bodyCount) == [2, 3, 0, 0])
    }

    @Test("A body cut off mid-chunk never reaches the origin as a complete request")
    func truncatedChunkedUpload() throws {
        let origin = try OriginServer { request in .text("got \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        try client.send(
            Self.expand("POST {U} HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n10\r\nonly-eight", origin))
        // The exchange is under way (forwarding what came of the body) when the client goes.
        #expect(proxy.waitUntil { proxy.stats.upstreamTasks == 1 })
        client.socket.reset()
        #expect(proxy.waitUntil { proxy.stats.connectionsOpen == 0 && origin.openConnections == 0 })
        #expect(origin.requests.isEmpty)
    }
}
