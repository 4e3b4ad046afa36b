import Foundation
import SluiceTestKit
import TLS
import Testing

/// HTTPS interception measured from outside a real `sluice serve` process: a large body through
/// an intercepted connection, a slow origin and a slow client, in bounded memory.
@Suite("Interception: resources", .serialized)
struct InterceptResourceTests {
    @Test("A large body crosses an intercepted connection with a slow reader in bounded memory")
    func largeInterceptedDownload() throws {
        // Given an HTTPS origin with a test CA, and a sluice that intercepts it
        let mebibytes = Int(ProcessInfo.processInfo.environment["SLUICE_INTERCEPT_MIB"] ?? "") ?? 192
        let directory = try CLI.workingDirectory()
        defer { CLI.remove(directory.path) }
        let pki = try TestPKI(in: directory)
        let originCAPath = pki.caPath
        let origin = try HTTPSOrigin(authority: pki.authority)
        defer { origin.stop() }
        let caPath = directory.appendingPathComponent("ca.pem").path
        let server = try ResourceTests.Server(
            """
            connect_ports: [\(origin.port)]
            tls: { intercept: [localhost], ca_cert: \(caPath), ca_key: \(directory.path)/ca.key }
            defaults: { tls: { ca_file: \(originCAPath) } }
            """)
        let before = server.memory("VmHWM")

        // When a client reads it at 40 MB/s while the origin sends in paced pieces
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", "--limit-rate", "40M",
            "-x", "http://127.0.0.1:\(server.port)", "--cacert", caPath,
            origin.url("/big?n=\(mebibytes << 20)&delay_ms=1"),
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        // Then every byte arrived and the proxy's memory stayed bounded
        #expect(output == "200 \(mebibytes << 20)", "\(output)")
        let peak = (server.memory("VmHWM") - before) / 1024
        #expect(peak < 48, "peak RSS grew \(peak) MiB for \(mebibytes) MiB through an intercepted connection")
        print(
            "resources: intercepted \(mebibytes) MiB, peak RSS \(before / 1024) -> \(server.memory("VmHWM") / 1024) MiB"
        )
    }

    @Test(
        "A WebSocket stream of 1 GiB through an intercepted connection, read by a slow client, relays in bounded memory",
        .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
    func largeWebSocketStream() throws {
        let mebibytes = Int(ProcessInfo.processInfo.environment["SLUICE_WEBSOCKET_MIB"] ?? "") ?? 1024
        let directory = try CLI.workingDirectory()
        defer { CLI.remove(directory.path) }
        let pki = try TestPKI(in: directory)
        let originCAPath = pki.caPath
        let (certificate, key) = try pki.serverFiles()
        let origin = try WebSocketOrigin(certificate: certificate, key: key)
        defer { origin.stop() }
        let caPath = directory.appendingPathComponent("ca.pem").path
        let server = try ResourceTests.Server(
            """
            connect_ports: [\(origin.port)]
            tls: { intercept: [localhost], ca_cert: \(caPath), ca_key: \(directory.path)/ca.key }
            defaults: { tls: { ca_file: \(originCAPath) } }
            """)
        let before = server.memory("VmHWM")
        // Incompressible messages of 1 MiB; the client pauses now and then and reads with a queue of two.
        let started = Date()
        let (status, json) = try WebSocketOrigin.client(
            "flood", proxy: server.port,
            url: "wss://localhost:\(origin.port)/flood?n=\(mebibytes << 20)&size=1048576&random=1",
            caFile: caPath)
        let seconds = Date().timeIntervalSince(started)
        #expect(status == 0)
        #expect(json["bytes"] as? Int == mebibytes << 20, "\(json)")
        #expect(json["close_code"] as? Int == 1000)
        let peak = (server.memory("VmHWM") - before) / 1024
        #expect(peak < 48, "peak RSS grew \(peak) MiB for \(mebibytes) MiB of WebSocket messages")
        print(
            "resources: websocket \(mebibytes) MiB intercepted in \(String(format: "%.1f", seconds)) s, peak RSS \(before / 1024) -> \(server.memory("VmHWM") / 1024) MiB"
        )
    }
}
