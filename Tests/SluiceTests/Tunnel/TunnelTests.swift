import Foundation
import Sluice
import SluiceTestKit
import Synchronization
import Testing

/// A TCP echo server that counts what it saw and half-closes when the client does.
final class EchoServer: @unchecked Sendable {
    let listener: TestListener
    var port: UInt16 { listener.port }

    init() throws {
        listener = try TestListener()
        let listener = self.listener
        Thread {
            while let socket = listener.accept() {
                Thread {
                    while let bytes = try? socket.receive(), !bytes.isEmpty { try? socket.send(bytes) }
                    socket.shutdownWrite()
                    _ = try? socket.receive()  // the proxy closes its side once both ends are done
                    socket.close()
                }.start()
            }
        }.start()
    }

    func stop() { listener.close() }
}

@Suite("CONNECT tunnels")
struct TunnelTests {
    @Test(
        "Bytes are relayed both ways and a half-close passes through (past 256 KiB back, in the kernel)",
        arguments: [100_000, 300_000, 8 << 20])
    func echoThroughTunnel(size: Int) throws {
        // Given an echo server on an allowed port
        let echo = try EchoServer()
        defer { echo.stop() }
        var configuration = Configuration()
        configuration.connectPorts = [echo.port]
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        // When the client opens a tunnel and sends bytes
        try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n\r\n")
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        let payload = [UInt8]((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })
        let socket = client.socket
        let writer = Thread {
            try? socket.send(payload)
            socket.shutdownWrite()
        }
        writer.start()
        // Then the same bytes come back and the tunnel ends after the half-close
        let echoed = try client.reader.readToEnd()
        #expect(echoed.count == payload.count)
        #expect(echoed.elementsEqual(payload), "the echoed bytes differ")
        #expect(proxy.waitUntil { proxy.stats.connectionsOpen == 0 })
        #expect(proxy.stats.tunnels == 1)
        // A download past Relay.spliceAfter goes on in the kernel.
        #expect(proxy.stats.tunnelsSpliced == (size > 256 * 1024 ? 1 : 0))
    }

    @Test("CONNECT to a port that is not allowed is 403, and its status line says why")
    func disallowedPort() throws {
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
        #expect(response.status == 403)
        #expect(response.statusLine == "HTTP/1.1 403 Port 22 not in connect_ports")
        #expect(ErrorTests.problemType(response) == "connect-port-not-allowed")
    }

    @Test(
        "Plain HTTP inside a CONNECT is served like a request to the proxy (the cache, the log); another authority is 421"
    )
    func plainHTTPInsideTunnel() throws {
        // Given an origin on an allowed port
        let origin = try OriginServer { request in
            .text("hello \(request.target)", headers: [("Cache-Control", "max-age=60")])
        }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.connectPorts = [origin.port]
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        // When a client opens a tunnel and speaks HTTP inside it, as WebSocket libraries do for ws://
        try client.send("CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        let first = try client.request("GET /a HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let second = try client.request("GET /a HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        // Then Sluice answers them itself: the second from its cache
        #expect(first.status == 200 && first.text == "hello /a")
        #expect(second.status == 200 && second.text == "hello /a")
        #expect(second.header("cache-status")?.contains("hit") == true, "\(second.fields)")
        #expect(origin.requests.map(\.target) == ["/a"])
        // And a request for another host on that connection is not forwarded there
        let other = try client.request("GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(other.status == 421)
        #expect(proxy.onLoop { $0.stats.tunnelsCarryingHTTP } == 1)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("\"GET http://127.0.0.1:\(origin.port)/a\" 200") }
            }, "\(proxy.logLines.all)")
    }

    @Test(
        "A far side that speaks first, and a client whose first bytes only look like a method, are relayed as they are")
    func serverFirstAndLookalikes() throws {
        // Given a server that greets first and then echoes (SMTP-like)
        let listener = try TestListener()
        defer { listener.close() }
        Thread {
            while let socket = listener.accept() {
                Thread {
                    try? socket.send("220 ready\r\n")
                    while let bytes = try? socket.receive(), !bytes.isEmpty { try? socket.send(bytes) }
                    socket.close()
                }.start()
            }
        }.start()
        let echo = try EchoServer()
        defer { echo.stop() }
        var configuration = Configuration()
        configuration.connectPorts = [listener.port, echo.port]
        let proxy = try ProxyHarness(configuration: configuration)
        // When a client reads the greeting and then sends what looks like a request line
        let client = try RawClient(port: proxy.port)
        try client.send("CONNECT 127.0.0.1:\(listener.port) HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try #require(try client.reader.readHead())
        #expect(try client.reader.readLine() == "220 ready")
        try client.send("GET / HTTP/1.1\r\n\r\n")
        // Then it reaches the server untouched
        #expect(try client.reader.readLine() == "GET / HTTP/1.1")
        // And a client that sends a few capitals to a server that waits gets them relayed after a moment
        let waiting = try RawClient(port: proxy.port)
        try waiting.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try #require(try waiting.reader.readHead())
        try waiting.send("HELO")
        #expect(try waiting.reader.readExactly(4) == Array("HELO".utf8))
        #expect(proxy.onLoop { $0.stats.tunnelsCarryingHTTP } == 0)
    }

    @Test("tunnel_plain_http: relay leaves the tunnel blind: the origin gets the request as the client wrote it")
    func plainHTTPRelayed() throws {
        let origin = try OriginServer { request in .text("origin saw \(request.target)") }
        defer { origin.stop() }
        var configuration = try ConfigLoader.load(yaml: "tunnel_plain_http: relay\n")
        configuration.connectPorts = [origin.port]
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        try client.send("CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        _ = try #require(try client.reader.readHead())
        let inside = try client.request("GET /raw HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        #expect(inside.text == "origin saw /raw")
        #expect(inside.header("via") == nil, "not through Sluice's forwarding")
        #expect(proxy.onLoop { ($0.stats.tunnelsCarryingHTTP, $0.stats.tunnels) } == (0, 1))
        #expect(throws: ConfigError.self) { try ConfigLoader.load(yaml: "tunnel_plain_http: maybe\n") }
    }

    @Test("Ports 80 and 443 are the default connect_ports (browsers tunnel ws:// to 80)")
    func defaultPorts() {
        #expect(Configuration().connectPorts == [80, 443])
    }

    @Test("CONNECT to a closed port is 502 and to the proxy itself is 403")
    func connectFailures() throws {
        let closed = try TestListener()
        let port = closed.port
        closed.closeUnused()
        var configuration = Configuration()
        configuration.connectPorts = [port]
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let response = try client.request("CONNECT 127.0.0.1:\(port) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(response.status == 502)
        #expect(ErrorTests.problemType(response) == "upstream-connect-failure")
        let selfClient = try RawClient(port: proxy.port)
        let loop = try selfClient.request("CONNECT localhost:\(proxy.port) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(loop.status == 403)
        #expect(ErrorTests.problemType(loop) == "loop-detected")
    }

    @Test("An idle tunnel is closed after tunnel_idle")
    func idleTunnel() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        var configuration = Configuration()
        configuration.connectPorts = [echo.port]
        configuration.timeouts.tunnelIdle = 300
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port, timeout: 5)
        _ = try client.request("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD")
        #expect(client.isClosedByPeer())
    }
}
