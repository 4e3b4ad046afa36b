import Foundation
import Sluice
import SluiceTestKit
import Synchronization
import Testing

@Suite("Graceful shutdown")
struct ShutdownTests {
    @Test("Shutdown stops accepting, lets in-flight exchanges finish, and closes idle connections")
    func gracefulShutdown() throws {
        // Given one exchange in flight (the origin answers after 0.4 s) and one idle client
        let origin = try OriginServer { _ in .delay(seconds: 0.4, then: .text("finished")) }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let idle = try RawClient(port: proxy.port)
        let busy = try RawClient(port: proxy.port)
        try busy.send(RawClient.get(origin.url("/slow")))
        _ = proxy.waitUntil { origin.requests.count == 1 }
        // When shutdown begins
        let done = Mutex(false)
        Thread {
            proxy.shutdown()
            done.withLock { $0 = true }
        }.start()
        #expect(proxy.waitUntil { proxy.onLoop { $0.isShuttingDown } })
        // Then new connections are refused, the idle one is closed, and the busy one completes
        #expect(throws: (any Error).self) { _ = try RawClient(port: proxy.port) }
        #expect(idle.isClosedByPeer())
        let response = try busy.reader.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(response.header("connection") == "close")
        #expect(proxy.waitUntil { done.withLock { $0 } })
    }

    @Test("Exchanges still running after shutdown_grace are cut off")
    func graceExpires() throws {
        var configuration = Configuration()
        configuration.timeouts.shutdownGrace = 200
        let origin = try OriginServer { _ in .delay(seconds: 3, then: .text("too late")) }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: configuration)
        let busy = try RawClient(port: proxy.port)
        try busy.send(RawClient.get(origin.url("/slower")))
        _ = proxy.waitUntil { origin.requests.count == 1 }
        let start = Date()
        proxy.shutdown()
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(busy.isClosedByPeer())
        // The cut exchange has its access line, as every exchange does.
        #expect(
            proxy.waitUntil { proxy.logLines.all.contains { $0.contains("/slower") && $0.contains("shutting-down") } },
            "\(proxy.logLines.all)")
    }
}
