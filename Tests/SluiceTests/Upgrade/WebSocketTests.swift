import Foundation
import SluiceTestKit
import TLS
import Testing

@testable import Sluice

/// WebSockets through Sluice with real parts: the `websockets` package from PyPI as origin and
/// client (plain and TLS), Sluice intercepting `localhost`, and a client that writes frames by
/// hand through the plain port.
@Suite("WebSockets", .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
struct WebSocketTests {
    /// A folder with Sluice's CA, a test CA for the TLS origin, and its certificate.
    final class Setup: @unchecked Sendable {
        let directory: URL
        let originCAPath: String
        let certificate: String
        let key: String
        var caCert: String { directory.appendingPathComponent("sluice-ca.pem").path }

        init() throws {
            directory = TestScratch.root.appendingPathComponent("ws-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let pki = try TestPKI(in: directory)
            originCAPath = pki.caPath
            (certificate, key) = try pki.serverFiles()
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func configuration(port: UInt16, rules: String = "") throws -> Configuration {
            try ConfigLoader.load(
                yaml: """
                    connect_ports: [443, \(port)]
                    tls:
                      intercept: ["localhost"]
                      ca_cert: \(caCert)
                      ca_key: \(directory.path)/sluice-ca.key
                    defaults:
                      tls: { ca_file: \(originCAPath) }
                    rules:\(rules.isEmpty ? " []" : "\n" + rules)
                    """)
        }
    }

    @Test(
        "An intercepted wss:// connection relays text, binary, fragmented, compressed and control messages, each read on the way"
    )
    func intercepted() throws {
        let setup = try Setup()
        let origin = try WebSocketOrigin(certificate: setup.certificate, key: setup.key)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(port: origin.port))
        let (status, json) = try WebSocketOrigin.client(
            "wss", proxy: proxy.port, url: "wss://localhost:\(origin.port)/greet", caFile: setup.caCert)
        #expect(status == 0, "\(json)")
        #expect(json["extensions"] as? [String] == ["permessage-deflate"], "the client and origin agreed compression")
        #expect(json["greeting"] as? [String] == ["hello", "one two three"])
        #expect(json["text"] as? String == "hello sluice")
        #expect(json["binary"] as? Bool == true)
        #expect(json["big"] as? Int == 200 * 1024)
        #expect(json["close_code"] as? Int == 1000)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("\"GET https://localhost:\(origin.port)/greet\" 101") }
            })
        // The greeting (2), three echoed pairs, ping and pong, 200 round trips, and the two closes.
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.webSocketMessages } == 2 + 6 + 2 + 400 + 2 })
        #expect(proxy.onLoop { ($0.stats.upgrades, $0.stats.tlsIntercepted) } == (1, 1))
        print("websocket: intercepted echo round trip p50 \(json["rtt_p50_ms"] ?? "?") ms")
    }

    @Test("ws:// as an absolute-form GET on the plain port: masked, fragmented with a ping inside, binary, close")
    func absoluteForm() throws {
        let origin = try WebSocketOrigin()
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: Configuration())
        let (status, json) = try WebSocketOrigin.client(
            "raw", proxy: proxy.port, url: "ws://127.0.0.1:\(origin.port)/echo")
        #expect(status == 0, "\(json)")
        #expect(json["status"] as? Int == 101)
        #expect((json["head"] as? String)?.contains("Via: 1.1 sluice") == true)
        #expect(json["pong"] as? [String] == ["ping in between"])
        #expect(json["echo"] as? [String] == ["fragmented text"])
        #expect(json["binary"] as? [Int] == [0, 1, 2, 255])
        #expect(json["close"] as? Int == 1000)
        // Sent: the text (3 frames), a ping, a binary, a close; received: the pong, the echoes, the close.
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.webSocketMessages } == 8 })
    }

    @Test(
        "An origin that refuses the upgrade: its answer is passed back (plain and intercepted), and validated by the rule"
    )
    func refused() throws {
        let setup = try Setup()
        let origin = try WebSocketOrigin(certificate: setup.certificate, key: setup.key)
        defer { origin.stop() }
        let plain = try WebSocketOrigin()
        defer { plain.stop() }
        let proxy = try ProxyHarness(
            configuration: setup.configuration(
                port: origin.port,
                rules: """
                      - name: sockets-must-switch
                        match: { host: "127.0.0.1", path: "/refuse" }
                        accept: { status: [101, "200-299"] }
                    """))
        let intercepted = try WebSocketOrigin.client(
            "refuse", proxy: proxy.port, url: "wss://localhost:\(origin.port)/refuse", caFile: setup.caCert)
        #expect(intercepted.json["status"] as? Int == 403)
        #expect(intercepted.json["body"] as? String == "no websockets here\n")
        // Through the rule that accepts only 101 and 2xx: a validation problem instead.
        let rejected = try WebSocketOrigin.client("raw", proxy: proxy.port, url: "ws://127.0.0.1:\(plain.port)/refuse")
        #expect(rejected.json["status"] as? Int == 502, "\(rejected.json)")
        #expect((rejected.json["head"] as? String)?.contains("application/problem+json") == true)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("\"GET https://localhost:\(origin.port)/refuse\" 403") }
            })
        #expect(proxy.onLoop { $0.stats.upgrades } == 0)
    }

    @Test(
        "ws:// that a client tunnels through CONNECT (websockets' proxy=) is served as plain HTTP: its messages are read"
    )
    func wsThroughConnect() throws {
        let origin = try WebSocketOrigin()
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.connectPorts = [origin.port]
        let proxy = try ProxyHarness(configuration: configuration)
        let watcher = try RawClient(port: try proxy.startAdmin())
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try watcher.reader.readHead()
        #expect(proxy.waitUntil { proxy.onLoop { $0.environment.watcher?.isWatching == true } })
        let (status, json) = try WebSocketOrigin.client(
            "wss", proxy: proxy.port, url: "ws://127.0.0.1:\(origin.port)/greet")
        #expect(status == 0, "\(json)")
        #expect(json["greeting"] as? [String] == ["hello", "one two three"])
        #expect(json["text"] as? String == "hello sluice")
        #expect(json["close_code"] as? Int == 1000)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("\"GET http://127.0.0.1:\(origin.port)/greet\" 101") }
            }, "\(proxy.logLines.all)")
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.webSocketMessages } == 2 + 6 + 2 + 400 + 2 })
        #expect(proxy.onLoop { ($0.stats.upgrades, $0.stats.tunnelsCarryingHTTP) } == (1, 1))
        // The page's feed shows the messages: the origin's greeting first
        var texts: [String] = []
        var kind = ""
        while texts.count < 3 {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            guard line.hasPrefix("data: "), kind == "websocket",
                let message = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
            else { continue }
            if let text = message["text"] as? String { texts.append(text) }
        }
        #expect(texts == ["hello", "one two three", "hello sluice"])
    }

    @Test("Messages appear on /events as they pass, with direction, type, size and text")
    func events() throws {
        let origin = try WebSocketOrigin()
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: Configuration())
        let watcher = try RawClient(port: try proxy.startAdmin())
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try watcher.reader.readHead()
        #expect(proxy.waitUntil { proxy.onLoop { $0.environment.watcher?.isWatching == true } })
        let (status, _) = try WebSocketOrigin.client(
            "raw", proxy: proxy.port, url: "ws://127.0.0.1:\(origin.port)/echo")
        #expect(status == 0)
        var kinds: [String] = []
        var messages: [[String: Any]] = []
        var kind = ""
        while messages.count < 8 {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            guard line.hasPrefix("data: ") else { continue }
            kinds.append(kind)
            if kind == "websocket",
                let json = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
            {
                messages.append(json)
            }
        }
        #expect(kinds.contains("exchange"), "the 101 is shown as it happens")
        let text = messages.first { $0["direction"] as? String == "send" && $0["opcode"] as? Int == 1 }
        #expect(text?["text"] as? String == "fragmented text")
        #expect(text?["frames"] as? Int == 3)
        let binary = messages.first { $0["direction"] as? String == "receive" && $0["opcode"] as? Int == 2 }
        #expect(binary?["hex"] as? String == "000102ff")
        let close = messages.first { $0["opcode"] as? Int == 8 }
        #expect(close?["close_code"] as? Int == 1000 && close?["text"] as? String == "done")
    }
}
