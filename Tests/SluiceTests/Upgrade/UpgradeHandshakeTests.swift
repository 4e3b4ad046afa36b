import Testing

@testable import Sluice

@Suite("Upgrade handshakes")
struct UpgradeHandshakeTests {
    static func request(_ fields: [(String, String)], minor: Int = 1) -> ProxyRequest {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(name: name, value: value) }
        return ProxyRequest(
            method: "GET", target: .origin("/chat"), rawTarget: "/chat", minorVersion: minor, headers: headers,
            bodyFraming: .none)
    }

    @Test("An upgrade needs Upgrade and a Connection: upgrade token on HTTP/1.1")
    func detection() {
        #expect(
            UpgradeHandshake.isUpgrade(Self.request([("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade")])))
        #expect(!UpgradeHandshake.isUpgrade(Self.request([("Upgrade", "websocket")])), "no Connection token")
        #expect(
            !UpgradeHandshake.isUpgrade(Self.request([("Upgrade", "websocket"), ("Connection", "upgrade")], minor: 0)))
    }

    @Test("The origin's head: origin-form, its Host, no hop-by-hop or proxy credentials, Via, the upgrade fields")
    func upstreamHead() throws {
        let request = Self.request([
            ("Host", "chat.example"), ("Upgrade", "websocket"), ("Connection", "Upgrade, X-Hop"),
            ("X-Hop", "gone"), ("Proxy-Authorization", "Basic c2VjcmV0"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"),
        ])
        let url = try #require(TargetURL("http://chat.example:8080/chat?room=1"))
        let head = String(decoding: UpgradeHandshake.upstreamHead(request, url: url), as: UTF8.self)
        #expect(head.hasPrefix("GET /chat?room=1 HTTP/1.1\r\nHost: chat.example:8080\r\n"))
        #expect(head.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(head.contains("Via: 1.1 sluice\r\n"))
        #expect(head.hasSuffix("Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n"))
        #expect(!head.contains("X-Hop") && !head.contains("Proxy-Authorization"))
    }

    @Test("A 101 must name a protocol the client offered; permessage-deflate parameters are read")
    func switching() {
        var head = ResponseHead(status: 101, reason: "Switching Protocols")
        head.headers.append(name: "Upgrade", value: "websocket")
        head.headers.append(name: "Sec-WebSocket-Extensions", value: "permessage-deflate; server_no_context_takeover")
        #expect(UpgradeHandshake.refusal(of: head, offered: ["websocket"]) == nil)
        #expect(UpgradeHandshake.refusal(of: head, offered: ["h2c"]) != nil)
        #expect(
            UpgradeHandshake.compression(head)
                == .init(enabled: true, clientNoContextTakeover: false, serverNoContextTakeover: true))
        head.headers.remove("upgrade")
        #expect(UpgradeHandshake.refusal(of: head, offered: ["websocket"]) != nil)
    }
}
