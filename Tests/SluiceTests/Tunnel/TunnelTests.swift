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
                    Thread.sleep(forTimeInterval: 0.2)
                    socket.close()
                }.start()
            }
        }.start()
    }

    func stop() { listener.close() }
}

@Suite("CONNECT tunnels")
struct TunnelTests {
    @Test("Bytes are relayed both ways and a half-close passes through")
    func echoThroughTunnel() throws {
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
        let payload = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 31) })
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
