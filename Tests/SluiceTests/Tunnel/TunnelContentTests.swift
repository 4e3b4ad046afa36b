import Testing

@testable import Sluice

@Suite("What a client sends first in a tunnel")
struct TunnelContentTests {
    private func classify(_ text: String) -> TunnelContent { TunnelContent.classify(Array(text.utf8)) }

    @Test("Request lines with origin-form and asterisk targets are HTTP for the tunnel's origin")
    func requestLines() {
        #expect(classify("GET / HTTP/1.1\r\n") == .http)
        #expect(classify("GET /chat?room=1") == .http)
        #expect(classify("OPTIONS * HTTP/1.1") == .http)
        #expect(classify("M-SEARCH * HTTP/1.1") == .http)
    }

    @Test("Absolute-form (a proxy behind the tunnel) and HTTP/2's preface (prior knowledge) are relayed as they are")
    func relayedOnPurpose() {
        #expect(classify("POST http://example.com/") == .other)
        #expect(classify("GET HTTPS://example.com/") == .other)
        #expect(classify("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") == .other)
    }

    @Test("A prefix that could still be a request line waits for more")
    func prefixes() {
        #expect(classify("") == .needMore)
        #expect(classify("G") == .needMore)
        #expect(classify("GET") == .needMore)
        #expect(classify("GET ") == .needMore)
    }

    @Test("A TLS handshake record, and other protocols, are told apart at once")
    func others() {
        #expect(TunnelContent.classify([0x16, 0x03, 0x01]) == .tls)
        #expect(TunnelContent.classify([0x00, 0x01, 0x02]) == .other)
        #expect(classify("PING\r\n") == .other, "Redis inline command")
        #expect(classify("*1\r\n$4\r\nPING\r\n") == .other, "Redis RESP")
        #expect(classify("SSH-2.0-OpenSSH_9.2\r\n") == .other)
        #expect(classify("get / HTTP/1.1") == .other, "methods are case-sensitive; lower-case is not HTTP")
        #expect(classify("GET  /") == .other, "one space")
        #expect(classify("GET ftp://x/") == .other)
        #expect(classify("GET example.com") == .other)
        #expect(classify(" GET /") == .other)
        #expect(classify(String(repeating: "A", count: 21) + " /") == .other, "longer than any method")
    }
}
