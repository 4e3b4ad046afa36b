import Foundation
import Sluice
import SluiceTestKit
import Testing

@Suite("Persistent connections on both sides")
struct KeepAliveTests {
    @Test("N sequential requests on one client connection use one upstream connection")
    func connectionReuse() throws {
        // Given
        let origin = try OriginServer { request in .text("n=\(request.target)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        // When
        for index in 0..<20 {
            let response = try client.request(RawClient.get(origin.url("/r\(index)")))
            #expect(response.text == "n=/r\(index)")
        }
        // Then the origin saw one connection and the proxy counted 20 tasks, one new connection
        #expect(origin.connectionCount == 1)
        #expect(Set(origin.requests.map(\.connection)) == [1])
        let stats = proxy.stats
        #expect(stats.upstreamTasks == 20)
        #expect(stats.upstreamConnections == 1)
        #expect(stats.connectionsOpen == 1)
    }

    @Test("Pipelined requests are answered in order")
    func pipelining() throws {
        let origin = try OriginServer { request in .text("path=\(request.target)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        // When three requests are sent in one write
        try client.send(
            RawClient.get(origin.url("/a"))
                + "POST \(origin.url("/b")) HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz"
                + RawClient.get(origin.url("/c")))
        // Then three responses come back in order
        #expect(try client.reader.readResponse().text == "path=/a")
        #expect(try client.reader.readResponse().text == "path=/b")
        #expect(try client.reader.readResponse().text == "path=/c")
        #expect(origin.requests.map(\.body.count) == [0, 3, 0])
    }

    @Test("A cache hit for a GET with content drops the content and answers the request pipelined behind it")
    func hitWithContentThenPipelined() throws {
        let origin = try OriginServer { request in
            .respond(
                status: 200, headers: [("Cache-Control", "max-age=600")], body: Array("doc \(request.target)".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let warm = try RawClient(port: proxy.port)
        #expect(try warm.request(RawClient.get(origin.url("/doc"))).text == "doc /doc")
        let host = "Host: 127.0.0.1:\(origin.port)\r\n"
        let client = try RawClient(port: proxy.port)
        try client.send(
            "GET \(origin.url("/doc")) HTTP/1.1\r\n\(host)Content-Length: 4\r\n\r\nabcd"
                + "GET \(origin.url("/doc")) HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n"
                + "GET \(origin.url("/doc")) HTTP/1.1\r\n\(host)\r\n")
        for _ in 0..<3 {
            let response = try client.reader.readResponse()
            #expect(response.status == 200 && response.text == "doc /doc")
            #expect(response.header("cache-status")?.contains("hit") == true)
            #expect(response.header("connection") == nil)
        }
        // Content not all there yet: the hit says the connection closes after it.
        let partial = try RawClient(port: proxy.port)
        try partial.send("GET \(origin.url("/doc")) HTTP/1.1\r\n\(host)Content-Length: 100\r\n\r\nabcd")
        let closing = try partial.reader.readResponse()
        #expect(closing.status == 200 && closing.header("connection") == "close")
        #expect(origin.requests.count == 1)
    }

    @Test("Connection: close is honoured after the response")
    func connectionClose() throws {
        let origin = try OriginServer { _ in .text("bye") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/"), extra: "Connection: close\r\n"))
        #expect(response.header("connection") == "close")
        #expect(response.text == "bye")
        #expect(client.isClosedByPeer())
    }

    @Test("HTTP/1.0 keep-alive works with a Content-Length response")
    func http10KeepAlive() throws {
        let origin = try OriginServer { _ in .text("ten") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let first = try client.request("GET \(origin.url("/")) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(first.header("connection") == "keep-alive")
        let second = try client.request("GET \(origin.url("/")) HTTP/1.0\r\n\r\n")
        #expect(second.text == "ten")
        #expect(second.header("connection") == "close")
        #expect(client.isClosedByPeer())
    }
}
