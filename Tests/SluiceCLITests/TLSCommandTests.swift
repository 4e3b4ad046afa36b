import Foundation
import SluiceTestKit
import TLS
import Testing

/// `sluice tls passthrough list|clear` against a running `sluice serve` whose client refused the
/// certificate twice (through its admin API, with the configuration's token).
@Suite("sluice tls passthrough")
struct TLSCommandTests {
    @Test(
        "list shows the window a refusing client started; clear ends it (with the admin token); no admin port is a clear error"
    )
    func listAndClear() throws {
        let directory = try CLI.workingDirectory()
        defer { CLI.remove(directory.path) }
        let pki = try TestPKI(in: directory)
        let originCAPath = pki.caPath
        let origin = try HTTPSOrigin(authority: pki.authority)
        defer { origin.stop() }
        let probe = try TestListener()
        let adminPort = probe.port
        probe.closeUnused()
        let config = directory.appendingPathComponent("sluice.yaml").path
        try """
        connect_ports: [\(origin.port)]
        admin: { listen: "127.0.0.1:\(adminPort)", token: "s3cret" }
        tls: { intercept: [localhost], ca_cert: ca.pem, ca_key: ca.key }
        defaults: { tls: { ca_file: \(originCAPath) } }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (process, _, port) = try CLI.serve(["--config", config, "--admin-listen", "127.0.0.1:\(adminPort)"])
        defer { process.terminate() }
        _ = try CLI.connect(port)
        _ = try CLI.connect(adminPort)
        // A client that trusts only the origin's CA refuses Sluice's leaf twice.
        for _ in 0..<2 {
            let refusing = Process()
            refusing.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            refusing.arguments = [
                "curl", "-s", "-o", "/dev/null", "--max-time", "5", "-x", "http://127.0.0.1:\(port)", "--cacert",
                originCAPath, origin.url("/nostore"),
            ]
            try refusing.run()
            refusing.waitUntilExit()
            #expect(refusing.terminationStatus != 0)
        }
        var listed = (status: Int32(0), output: "")
        _ = try eventually(every: 0.1) {
            listed = try CLI.run(["tls", "passthrough", "list", "--config", config])
            return listed.output.contains("localhost")
        }
        #expect(listed.status == 0)
        #expect(listed.output.hasPrefix("localhost\tclient 127.0.0.1\tfingerprint t13"), "\(listed.output)")
        let cleared = try CLI.run(["tls", "passthrough", "clear", "--host", "localhost", "--config", config])
        #expect(cleared.status == 0 && cleared.output == "ended 1 passthrough window\n", "\(cleared.output)")
        let empty = try CLI.run(["tls", "passthrough", "list", "--json", "--config", config])
        #expect(empty.output == "[]\n", "\(empty.output)")
        // A configuration without the token is refused by the admin API, and says so.
        let tokenless = try CLI.temporaryFile("admin: { listen: \"127.0.0.1:\(adminPort)\" }")
        defer { CLI.remove(tokenless) }
        let refused = try CLI.run(["tls", "passthrough", "clear", "--config", tokenless])
        #expect(refused.status == 1 && refused.output.contains("admin.token"), "\(refused.output)")
        // No admin port: a clear error, not a hang.
        let off = try CLI.temporaryFile("admin: { listen: \"\" }")
        defer { CLI.remove(off) }
        let none = try CLI.run(["tls", "passthrough", "list", "--config", off])
        #expect(none.status == 1 && none.output.contains("admin.listen is empty"), "\(none.output)")
    }
}
