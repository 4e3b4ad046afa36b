import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// A message held for a person does not hold the connection's keepalive.
@Suite("WebSocket pings behind a paused message")
struct WebSocketKeepaliveTests {
    @Test(
        "A ping sent behind a paused message reaches the origin and its pong comes back; the messages keep their order",
        .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
    func pingPassesAPausedMessage() throws {
        let (setup, origin, proxy, admin) = try BreakpointTests.webSocketPauses(["body_contains": "hold"])
        defer { origin.stop() }
        // Counted before the client starts: only the ping and its pong pass while it waits.
        let before = proxy.onLoop { $0.stats.webSocketMessages }
        nonisolated(unsafe) var result: (status: Int32, json: [String: Any]) = (-1, [:])
        let client = Thread {
            do {
                result = try WebSocketOrigin.client(
                    "keepalive", proxy: proxy.port, url: "wss://localhost:\(origin.port)/echo", caFile: setup.caCert)
            } catch {
                result = (-2, ["error": "\(error)"])
            }
        }
        client.start()
        let item = try #require(BreakpointTests.paused(admin).first)
        let id = try #require(item["id"] as? Int)
        // The ping and its pong pass while the message waits (the relay counts both).
        #expect(
            proxy.waitUntil { proxy.onLoop { $0.stats.webSocketMessages } >= before + 2 },
            "the ping waited behind the message")
        #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(id)/resume").0 == 200)
        #expect(eventually(timeout: 30) { result.status != -1 })
        #expect(result.status == 0, "\(result.json)")
        #expect(result.json["pong_while_paused"] as? Bool == true, "\(result.json)")
        #expect(result.json["echoes"] as? [String] == ["hold me", "after"], "\(result.json)")
        #expect(result.json["close_code"] as? Int == 1000)
    }
}
