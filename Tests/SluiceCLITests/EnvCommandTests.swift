import Foundation
import SluiceTestKit
import Testing

/// `sluice env`: a shell pointed at a running `sluice serve` by `eval "$(sluice env)"`, then real
/// clients (Python requests, curl) through an intercepted HTTPS origin.
@Suite(
    "sluice env", .serialized, .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
struct EnvCommandTests {
    @Test("The lines for sh, fish and PowerShell, and --unset; nothing about a CA when Sluice does not intercept")
    func lines() throws {
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("plain.yaml").path
        try "listen: \"127.0.0.1:3128\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        // (Run without a NO_PROXY of the tests' own: what it keeps is checked below.)
        var environment = CLI.environment()
        environment["NO_PROXY"] = nil
        environment["no_proxy"] = nil
        func env(_ arguments: [String]) throws -> (status: Int32, output: String) {
            try runProgram(CLI.binary.path, ["env", "--config", config] + arguments, environment: environment)
        }
        let sh = try env(["--no-proxy", "internal.example"])
        #expect(sh.status == 0)
        #expect(sh.output.contains("export NODE_USE_ENV_PROXY='1'\n"), "\(sh.output)")
        #expect(sh.output.contains("unset ALL_PROXY\n"))
        #expect(sh.output.contains("export HTTP_PROXY='http://127.0.0.1:3128'\n"))
        #expect(sh.output.contains("export https_proxy='http://127.0.0.1:3128'\n"))
        #expect(sh.output.contains("export NO_PROXY='internal.example'\n"))
        #expect(!sh.output.contains("export SSL_CERT_FILE"), "\(sh.output)")
        let fish = try CLI.run(["env", "--config", config, "--shell", "fish"])
        #expect(fish.output.contains("set -gx HTTPS_PROXY 'http://127.0.0.1:3128'\n"))
        let powershell = try CLI.run(["env", "--config", config, "--shell", "powershell"])
        #expect(powershell.output.contains("$env:HTTP_PROXY = 'http://127.0.0.1:3128'\n"))
        // The shells' own names; a NO_PROXY the terminal had keeps its hosts but loopback ones.
        #expect(try env(["--shell", "pwsh"]).output.contains("$env:HTTP_PROXY = 'http://127.0.0.1:3128'\n"))
        #expect(try env(["--shell", "zsh"]).output.contains("export HTTP_PROXY='http://127.0.0.1:3128'\n"))
        environment["NO_PROXY"] = "corp.example, localhost,127.0.0.1,::1,.intra"
        let kept = try env(["--shell", "bash", "--no-proxy", "internal.example"])
        #expect(kept.output.contains("export NO_PROXY='corp.example,.intra,internal.example'\n"), "\(kept.output)")
        environment["NO_PROXY"] = nil
        // With proxy_auth, the credentials are in the URL (percent-encoded), read from the file.
        let secret = directory.appendingPathComponent("password").path
        try "p@ss word\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let authenticated = directory.appendingPathComponent("auth.yaml").path
        try "listen: \"127.0.0.1:3128\"\nproxy_auth: { user: phone, password_file: password }\n".write(
            toFile: authenticated, atomically: true, encoding: .utf8)
        let withAuth = try CLI.run(["env", "--config", authenticated])
        #expect(
            withAuth.output.contains("export HTTP_PROXY='http://phone:p%40ss%20word@127.0.0.1:3128'\n"),
            "\(withAuth.output)")
        var pointed = environment
        pointed["SLUICE_ENV"] = "1"
        let unset = try runProgram(CLI.binary.path, ["env", "--unset"], environment: pointed)
        #expect(unset.output.contains("unset HTTPS_PROXY\nunset http_proxy\n"), "\(unset.output)")
        #expect(unset.output.contains("unset REQUESTS_CA_BUNDLE\n"))
        // A terminal never pointed at Sluice (or undone already) keeps its own values.
        let nothing = try env(["--unset"])
        #expect(nothing.output == "# nothing to undo: this terminal was not pointed at Sluice by sluice env\n")

        // What the shell had comes back with --unset, also after a second eval; the rest goes.
        let script = """
            eval "$("$SLUICE" env --config "$CONFIG")" && eval "$("$SLUICE" env --config "$CONFIG")" &&
            echo "during $http_proxy|$NO_PROXY|${ALL_PROXY-none}" && eval "$("$SLUICE" env --unset)" &&
            eval "$("$SLUICE" env --unset)" &&
            echo "after $http_proxy|$NO_PROXY|$SSL_CERT_FILE|$ALL_PROXY|${HTTPS_PROXY-none}|${NODE_USE_ENV_PROXY-none}|${SLUICE_ENV-none}|${SLUICE_SAVED_http_proxy-none}"
            """
        environment["SLUICE"] = CLI.binary.path
        environment["CONFIG"] = config
        environment["http_proxy"] = "http://corp.example:3128"
        environment["NO_PROXY"] = "corp.example"
        environment["SSL_CERT_FILE"] = "/etc/corp 'it'.pem"
        environment["ALL_PROXY"] = "socks5h://corp.example:1080"
        for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "NODE_USE_ENV_PROXY", "SLUICE_ENV"] {
            environment[name] = nil
        }
        let shell = try runProgram("/bin/sh", ["-c", script], environment: environment)
        #expect(shell.status == 0, "\(shell.output)")
        #expect(shell.output.contains("during http://127.0.0.1:3128|corp.example|none\n"), "\(shell.output)")
        #expect(
            shell.output.contains(
                "after http://corp.example:3128|corp.example|/etc/corp 'it'.pem|socks5h://corp.example:1080|none|none|none|none\n"
            ), "\(shell.output)")
    }

    @Test("eval \"$(sluice env)\" points requests and curl at an intercepting Sluice: the origin answers through it")
    func evalInAShell() throws {
        // Given an HTTPS origin with a test CA and a running sluice that intercepts it
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try TestPKI(in: directory)
        let (certificate, key) = try pki.serverFiles()
        let (origin, originPort) = try TestVenv.start("run/origin.py", [certificate, key])
        defer { TestVenv.stop(origin) }
        let probe = try TestListener()
        let port = probe.port
        probe.closeUnused()
        let config = directory.appendingPathComponent("sluice.yaml").path
        try """
        listen: "127.0.0.1:\(port)"
        cache: { path: cache.sqlite }
        connect_ports: [\(originPort)]
        tls: { intercept: [localhost], ca_cert: ca.pem, ca_key: ca.key }
        defaults: { tls: { ca_file: \(pki.caPath) } }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (serve, pipe, _) = try CLI.serve(["--config", config, "--listen", "127.0.0.1:\(port)"])
        pipe.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        // Listening means started: the CA exists from then on.
        _ = try CLI.connect(port)
        let url = "https://localhost:\(originPort)/v1/widgets/1"
        // When a shell evaluates `sluice env` and runs the clients with nothing else set
        let script = """
            eval "$("$SLUICE" env --config "$CONFIG")" &&
            "$PYTHON" "$CLIENT" "$URL" &&
            curl -s -o /dev/null -w 'curl %{http_code}\\n' "$URL" &&
            echo "bundle $SSL_CERT_FILE"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        var environment = CLI.environment()
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "SSL_CERT_FILE", "CURL_CA_BUNDLE"] {
            environment[name] = nil
        }
        environment["SLUICE"] = CLI.binary.path
        environment["CONFIG"] = config
        environment["PYTHON"] = TestVenv.python
        environment["CLIENT"] = TestVenv.script("run/client.py")
        environment["URL"] = url
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        // Then both went through Sluice, trusting its CA from the bundle next to it
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("200 \(url)"), "\(text)")
        #expect(text.contains("curl 200"), "\(text)")
        #expect(text.contains("bundle \(directory.path)/sluice-ca-bundle.pem"), "\(text)")
        let bundle = try String(contentsOfFile: directory.path + "/sluice-ca-bundle.pem", encoding: .utf8)
        let ca = try String(contentsOfFile: directory.path + "/ca.pem", encoding: .utf8)
        #expect(bundle.hasSuffix(ca))
        #expect(bundle.components(separatedBy: "BEGIN CERTIFICATE").count > 2, "the system's CAs come first")
        // And a new CA (both files removed, then `ca init`) rewrites the bundle those terminals name
        for file in ["ca.pem", "ca.key"] { try FileManager.default.removeItem(atPath: directory.path + "/" + file) }
        let made = try CLI.run(["ca", "init", "--config", config])
        #expect(made.status == 0 && made.output.contains("rewrote"), "\(made.output)")
        let fresh = try String(contentsOfFile: directory.path + "/ca.pem", encoding: .utf8)
        #expect(fresh != ca)
        #expect(try String(contentsOfFile: directory.path + "/sluice-ca-bundle.pem", encoding: .utf8).hasSuffix(fresh))
    }
}
