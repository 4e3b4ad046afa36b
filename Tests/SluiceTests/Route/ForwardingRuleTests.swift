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

    @Test("Connection cannot be used to strip Host or framing")
    func protectedFields() {
        var fields = HTTPFields([
            ("Connection", "Host, Content-Length, X-A"), ("Host", "h"), ("Content-Length", "1"), ("X-A", "a"),
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
}
