import Foundation
import Sluice
import SluiceTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Streaming with backpressure")
struct StreamingTests {
    @Test("200 MB stream through a slow reader: the origin is held back, every byte arrives")
    func largeBodySlowReader() throws {
        // Given a 200 MB response
        let total = 200 * 1024 * 1024
        let origin = try OriginServer { _ in
            .stream(status: 200, headers: [("Content-Type", "application/octet-stream")], total: total)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port, timeout: 60)
        // The client's receive buffer fixed: the kernel would grow it toward tcp_rmem's maximum
        // (32 MiB on some machines) as the client reads fast, and that is the client's memory,
        // not what the proxy holds.
        var size: Int32 = 1 << 20
        setsockopt(client.socket.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        try client.send(RawClient.get(origin.url("/big")))
        guard let head = try client.reader.readHead() else { throw TestError("no head") }
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        // When the client reads nothing at first, the proxy pauses the origin (not buffering it):
        // the origin stops sending
        #expect(settled(quiet: 0.3) { origin.streamedBytes } != nil, "the origin never paused")
        // What left the origin but not reached the client sits in socket buffers or in the proxy;
        // it must stay bounded. (This process's RSS is not a fair measure: other tests run beside.)
        let inFlightWhilePaused = origin.streamedBytes
        var received = 0
        var peakInFlight = inFlightWhilePaused
        while received < total {
            let got = try client.reader.skip(min(8 * 1024 * 1024, total - received))
            if got == 0 { break }
            received += got
            peakInFlight = max(peakInFlight, origin.streamedBytes - received)
        }
        // Then every byte arrived and the origin was held back by the client's pace: what was in
        // flight stayed within the socket buffers the kernel allows on the way (the origin's
        // send buffer, the proxy's receive and send buffers, the client's fixed receive buffer,
        // doubled by the kernel) and the proxy's own window of a few hundred KiB.
        #expect(received == total)
        let bound = max(24 << 20, Self.kernelMaximum("tcp_rmem") + 2 * Self.kernelMaximum("tcp_wmem") + (8 << 20))
        #expect(inFlightWhilePaused < bound, "\(inFlightWhilePaused >> 20) MiB while paused")
        #expect(peakInFlight < bound, "\(peakInFlight >> 20) MiB at most, bound \(bound >> 20) MiB")
    }

    /// The largest size the kernel grows a TCP buffer to (`/proc/sys/net/ipv4/tcp_rmem` or
    /// `tcp_wmem`, third field); 6 MiB, Linux's usual receive maximum, when unreadable.
    static func kernelMaximum(_ name: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? (6 << 20)
    }

    @Test("The head and each body byte reach the client as they arrive, not when more follows")
    func bytesAreNotHeldForMore() throws {
        // The origin sends its head at once, then each byte of a 3-byte body 0.7 s after the last.
        let origin = try OriginServer { _ in
            .drip(
                head: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\n",
                body: Array("abc".utf8), interval: 0.7)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port, timeout: 10)
        let sent = Date()
        try client.send(RawClient.get(origin.url("/drip")))
        guard let head = try client.reader.readHead() else { throw TestError("no head") }
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        let headTime = Date().timeIntervalSince(sent)
        #expect(headTime < 0.5, "the head waited \(headTime) s for the body")
        let start = Date()
        var arrivals: [Double] = []
        for _ in 0..<3 {
            _ = try client.reader.readExactly(1)
            arrivals.append(Date().timeIntervalSince(start))
        }
        // Each byte came before the next one left the origin (0.7 s apart): nothing waited for it.
        #expect(arrivals[0] > 0.35 && arrivals[0] < 1.2, "arrivals \(arrivals)")
        #expect(arrivals[1] - arrivals[0] > 0.35 && arrivals[2] - arrivals[1] > 0.35, "arrivals \(arrivals)")
    }

    @Test("A client that resets mid-body: the origin's transfer stops and the exchange is logged as aborted")
    func clientResetMidBody() throws {
        let total = 200 * 1024 * 1024
        let origin = try OriginServer { _ in
            .stream(status: 200, headers: [("Content-Type", "application/octet-stream")], total: total)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port, timeout: 30)
        try client.send(RawClient.get(origin.url("/big")))
        guard let head = try client.reader.readHead() else { throw TestError("no head") }
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        #expect(try client.reader.skip(1024 * 1024) == 1024 * 1024)
        client.socket.reset()
        Self.expectLoggedAborted(proxy, path: "/big")
        // The upstream connection closes at the loop's next turn; the origin then stops for good.
        #expect(
            proxy.waitUntil { origin.streamsCut == 1 } && settled { origin.streamedBytes } != nil,
            "the origin kept sending after the client left")
        let sent = origin.streamedBytes
        #expect(sent < total / 2, "origin sent \(sent) bytes")
        #expect(proxy.stats.responses == 1)
    }

    @Test("A client that resets while a stored body is sent: the rest is not read, the exchange is logged as aborted")
    func clientResetDuringStoredBody() throws {
        let total = 40 * 1024 * 1024
        let origin = try OriginServer { _ in
            .stream(
                status: 200,
                headers: [("Content-Type", "application/octet-stream"), ("Cache-Control", "max-age=3600")],
                total: total)
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let first = try RawClient(port: proxy.port, timeout: 30)
        try first.send(RawClient.get(origin.url("/stored")))
        guard try first.reader.readHead() != nil else { throw TestError("no head") }
        #expect(try first.reader.skip(total) == total)
        #expect(proxy.waitUntil(timeout: 10) { proxy.stats.cacheStores == 1 })
        let second = try RawClient(port: proxy.port, timeout: 30)
        try second.send(RawClient.get(origin.url("/stored")))
        guard let head = try second.reader.readHead() else { throw TestError("no head") }
        let cacheStatus = head.fields.first { $0.0.lowercased() == "cache-status" }?.1
        #expect(cacheStatus?.hasPrefix("Sluice; hit") == true)
        #expect(try second.reader.skip(64 * 1024) == 64 * 1024)
        second.socket.reset()
        Self.expectLoggedAborted(proxy, path: "/stored")
        #expect(origin.requests.count == 1)
    }

    /// The exchange for `path` counts as the one error and is logged once, as aborted.
    static func expectLoggedAborted(_ proxy: ProxyHarness, path: String) {
        #expect(proxy.waitUntil(timeout: 10) { proxy.stats.errors == 1 })
        #expect(
            proxy.waitUntil(timeout: 5) {
                proxy.logLines.all.filter { $0.contains(path) && $0.contains(" aborted") }.count == 1
            })
    }

    @Test("A large request body streams upstream and arrives whole")
    func largeUpload() throws {
        let origin = try OriginServer { request in
            var sum = 0
            for byte in request.body { sum = (sum &+ Int(byte)) % 1_000_003 }
            return .text("\(request.body.count) \(sum)")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port, timeout: 30)
        let body = [UInt8]((0..<(8 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var sum = 0
        for byte in body { sum = (sum &+ Int(byte)) % 1_000_003 }
        try client.send("PUT \(origin.url("/up")) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
        try client.socket.send(body)
        let response = try client.reader.readResponse()
        #expect(response.text == "\(body.count) \(sum)")
    }
}
