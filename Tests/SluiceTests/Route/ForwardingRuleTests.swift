import Testing

@testable import Sluice

@Suite("Forwarding header rules")
struct ForwardingRuleTests {
    static func request(_ head: String) -> ProxyRequest {
        var parser = RequestParser()
        guard case .head(let request, _) = Array(head.utf8).withUnsafeBytes({ parser.parse($0) }) else {
            fatalError(head)
        }
        return request
    }

    @Test("Upstream requests lose hop-by-hop and framing fields, gain Via, keep the rest in order")
    func upstream() {
        let request = Self.request(
            "POST http://o.example/p HTTP/1.1\r\nHost: o.example\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\n"
                + "Content-Length: 3\r\nExpect: 100-continue\r\nUpgrade: h2c\r\nVia: 1.0 corp\r\nA: 1\r\nB: 2\r\n\r\n")
        let upstream = Forwarding.upstreamRequest(for: request, url: TargetURL("http://o.example/p")!)
        #expect(upstream.headers.fields.map(\.name) == ["Via", "A", "B"])
        #expect(upstream.headers["via"] == "1.0 corp, 1.1 sluice")
        #expect(upstream.body == .length(3))
    }

    @Test("Connection cannot be used to strip Host or framing; any other field it names goes (RFC 9110 §7.6.1)")
    func protectedFields() {
        var fields = HTTPFields([
            ("Connection", "Host, Content-Length, X-A, Content-Type"), ("Host", "h"), ("Content-Length", "1"),
            ("X-A", "a"), ("Content-Type", "text/plain"),
        ])
        HopByHop.strip(&fields)
        #expect(fields.fields.map(\.name) == ["Host", "Content-Length"])
    }

    @Test(
        "Client framing follows the origin's and the client's version",
        arguments: [
            ("GET", 1, 200, [("Content-Length", "5")], ResponseWriter.Framing.length),
            ("GET", 1, 200, [("Transfer-Encoding", "chunked")], .chunked),
            ("GET", 1, 200, [("Transfer-Encoding", "chunked"), ("Content-Length", "5")], .chunked),
            ("GET", 0, 200, [], .close),
            ("HEAD", 1, 200, [("Content-Length", "5")], .none),
            ("GET", 1, 204, [], .none),
            ("GET", 1, 304, [("Content-Length", "5")], .none),
        ])
    func responseFraming(
        method: String, minor: Int, status: Int, fields: [(String, String)], framing: ResponseWriter.Framing
    ) {
        let request = Self.request("\(method) http://h/ HTTP/1.\(minor)\r\nHost: h\r\n\r\n")
        let head = ResponseHead(status: status, headers: HTTPFields(fields))
        let (headers, chosen) = Forwarding.clientResponse(head, request: request, date: "D", keepAlive: true)
        #expect(chosen == framing)
        if framing == .chunked {
            #expect(headers["content-length"] == nil && headers["transfer-encoding"] == "chunked")
        }
        #expect(headers["date"] == "D")
        #expect(headers["via"] == "1.1 sluice")
    }

    /// Heads that exercise every edit: hop-by-hop lines and ones `Connection` names (among them
    /// `Date` and `Via`), repeated `Via` and `Content-Length`, 204/205/304, chunked and close framing.
    static let editCases: [(method: String, minor: Int, status: Int, fields: [(String, String)])] = [
        ("GET", 1, 200, [("Server", "o"), ("Content-Length", "5"), ("Content-Type", "text/plain")]),
        ("GET", 1, 200, [("via", "1.0 a"), ("X", "1"), ("Via", "1.1 b"), ("Content-Length", "2")]),
        (
            "GET", 1, 200,
            [("Connection", "X-Gone, date, Via"), ("X-Gone", "1"), ("Date", "d"), ("Via", "1.0 a"), ("Y", "2")]
        ),
        (
            "GET", 1, 200,
            [("Keep-Alive", "5"), ("TE", "x"), ("Transfer-Encoding", "chunked"), ("Trailer", "T"), ("Z", "z")]
        ),
        ("GET", 0, 200, [("Date", "d"), ("Transfer-Encoding", "chunked"), ("Content-Length", "9")]),
        ("GET", 1, 204, [("Content-Length", "0"), ("Via", "1.0 a")]),
        (
            "GET", 1, 205,
            [("content-length", "7"), ("A", "1"), ("Content-Length", "8"), ("Transfer-Encoding", "chunked")]
        ),
        ("GET", 1, 205, [("A", "1")]),
        ("HEAD", 1, 200, [("Content-Length", "5"), ("Proxy-Authenticate", "Basic")]),
        ("GET", 1, 304, [("ETag", "\"e\""), ("Upgrade", "h2c"), ("Connection", "upgrade, keep-alive")]),
        ("GET", 1, 200, [("Content-Length", "x5")]),
        ("GET", 1, 101, []),
    ]

    @Test("The client's head written straight from the origin's lines is the edited list's head, byte for byte")
    func editedHeadBytes() {
        for (method, minor, status, fields) in Self.editCases {
            let request = Self.request("\(method) http://h/ HTTP/1.\(minor)\r\nHost: h\r\n\r\n")
            let head = ResponseHead(status: status, reason: "R", headers: HTTPFields(fields))
            for keepAlive in [true, false] {
                for stripped in [true, false] {
                    var edit = Forwarding.clientEdit(
                        head, request: request, date: "D", keepAlive: keepAlive, stripped: stripped)
                    edit.added.append(.init(name: "Cache-Status", value: "sluice; fwd=uri-miss"))
                    let direct = ResponseWriter.head(status: status, reason: "R", origin: head.headers, edit: edit)
                    let listed = ResponseWriter.head(status: status, reason: "R", headers: edit.apply(to: head.headers))
                    #expect(
                        String(decoding: direct, as: UTF8.self) == String(decoding: listed, as: UTF8.self),
                        "\(method) 1.\(minor) \(status) \(fields) keepAlive \(keepAlive) stripped \(stripped)")
                }
            }
        }
    }

    @Test(
        "Edits keep the origin's order and spelling: one Via in the first one's place, Date and Via that Connection names are Sluice's"
    )
    func editedFields() {
        func lines(
            _ status: Int, _ fields: [(String, String)], method: String = "GET", minor: Int = 1, keepAlive: Bool = true,
            stripped: Bool = false
        ) -> [String] {
            let request = Self.request("\(method) http://h/ HTTP/1.\(minor)\r\nHost: h\r\n\r\n")
            let head = ResponseHead(status: status, headers: HTTPFields(fields))
            let (headers, _) = Forwarding.clientResponse(
                head, request: request, date: "D", keepAlive: keepAlive, stripped: stripped)
            return headers.fields.map { "\($0.name): \($0.value)" }
        }
        #expect(
            lines(200, [("via", "1.0 a"), ("X", "1"), ("Via", "1.1 b"), ("Content-Length", "2")])
                == ["via: 1.0 a, 1.1 b, 1.1 sluice", "X: 1", "Content-Length: 2", "Date: D"])
        #expect(
            lines(
                200,
                [("Connection", "X-Gone, date, Via"), ("X-Gone", "1"), ("Date", "d"), ("Via", "1.0 a"), ("Y", "2")])
                == ["Y: 2", "Transfer-Encoding: chunked", "Via: 1.1 sluice", "Date: D"])
        #expect(
            lines(
                205, [("content-length", "7"), ("A", "1"), ("Content-Length", "8"), ("Transfer-Encoding", "chunked")])
                == ["content-length: 0", "A: 1", "Via: 1.1 sluice", "Date: D"])
        #expect(lines(205, [("A", "1")]) == ["A: 1", "Content-Length: 0", "Via: 1.1 sluice", "Date: D"])
        #expect(lines(204, [("Content-Length", "0"), ("Date", "d")]) == ["Date: d", "Via: 1.1 sluice"])
        #expect(
            lines(200, [("Date", "d"), ("Transfer-Encoding", "chunked"), ("Content-Length", "9")], minor: 0)
                == ["Date: d", "Via: 1.1 sluice", "Connection: close"])
        #expect(
            lines(200, [("Content-Length", "1")], minor: 0)
                == ["Content-Length: 1", "Via: 1.1 sluice", "Date: D", "Connection: keep-alive"])
        #expect(
            lines(200, [("Content-Length", "1")], keepAlive: false)
                == ["Content-Length: 1", "Via: 1.1 sluice", "Date: D", "Connection: close"])
        #expect(
            lines(200, [("Content-Length", "9")], method: "HEAD") == [
                "Content-Length: 9", "Via: 1.1 sluice", "Date: D",
            ])
        #expect(
            lines(304, [("Content-Length", "9"), ("ETag", "e")]) == [
                "Content-Length: 9", "ETag: e", "Via: 1.1 sluice", "Date: D",
            ])
        // A stored head was stripped when stored: nothing of it goes again.
        #expect(
            lines(200, [("Keep-Alive", "5"), ("Content-Length", "1")], stripped: true)
                == ["Keep-Alive: 5", "Content-Length: 1", "Via: 1.1 sluice", "Date: D"])
    }
}
