import Foundation
import SluiceTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `sluice` binary.
struct CLI {
    static var binary: URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return directory.appendingPathComponent("sluice")
    }

    /// A data directory of the tests' own (`XDG_DATA_HOME`): no test writes into the user's.
    static let dataHome = TestScratch.root.appendingPathComponent(
        "sluice-data-\(UUID().uuidString)")

    /// The environment a `sluice` process runs with: the tests' data directory, no `SLUICE_CONFIG`.
    static func environment(dataHome: URL = CLI.dataHome) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = dataHome.path
        environment["SLUICE_CONFIG"] = nil
        return environment
    }

    static func run(_ arguments: [String], currentDirectory: URL? = nil, dataHome: URL = CLI.dataHome) throws -> (
        status: Int32, output: String
    ) {
        try runProgram(
            binary.path, arguments, environment: environment(dataHome: dataHome), currentDirectory: currentDirectory)
    }

    static func temporaryFile(_ text: String) throws -> String {
        let path = TestScratch.root.appendingPathComponent("sluice-\(UUID().uuidString).yaml")
            .path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func remove(_ paths: String...) {
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Starts `sluice serve` with `arguments` on a free port; returns the process, its output pipe and the port.
    /// - Parameters:
    ///   - fileSizeLimitKiB: `ulimit -f` for the process (a full disk, as far as its files go).
    ///   - descriptorLimit: `ulimit -n` (soft and hard) for the process.
    ///   - currentDirectory: its working directory; a fresh one by default.
    ///   - dataHome: its `XDG_DATA_HOME`; the working directory by default.
    static func serve(
        _ arguments: [String], fileSizeLimitKiB: Int? = nil, descriptorLimit: Int? = nil,
        currentDirectory: URL? = nil, dataHome: URL? = nil
    ) throws -> (Process, Pipe, UInt16) {
        let probe = try TestListener()
        let port = probe.port
        probe.closeUnused()
        let process = Process()
        // No admin port unless a test asks (tests run side by side; 8081 is one port).
        let admin = arguments.contains("--admin-listen") ? [] : ["--admin-listen", ""]
        let serve = ["serve", "--listen", "127.0.0.1:\(port)"] + admin + arguments
        let limits =
            (fileSizeLimitKiB.map { ["ulimit -f \($0)"] } ?? []) + (descriptorLimit.map { ["ulimit -n \($0)"] } ?? [])
        if !limits.isEmpty {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", (limits + ["exec \"$0\" \"$@\""]).joined(separator: " && "), binary.path] + serve
        } else {
            process.executableURL = binary
            process.arguments = serve
        }
        // Its own working and data directory: files no configuration names land there.
        let directory = try currentDirectory ?? workingDirectory()
        process.currentDirectoryURL = directory
        process.environment = environment(dataHome: dataHome ?? directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        return (process, pipe, port)
    }

    /// A fresh directory for a `serve` run (its working directory and `XDG_DATA_HOME`).
    static func workingDirectory() throws -> URL {
        let directory = TestScratch.root.appendingPathComponent("sluice-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func connect(_ port: UInt16) throws -> RawClient {
        var client: RawClient?
        _ = eventually(every: 0.05) {
            client = try? RawClient(port: port)
            return client != nil
        }
        guard let client else { throw TestError("sluice did not start listening on \(port)") }
        return client
    }
}

@Suite("The sluice command")
struct SluiceCommandTests {
    @Test("check-config accepts a good file and names the key and line of a bad one")
    func checkConfig() throws {
        let good = try CLI.temporaryFile("listen: 127.0.0.1:9999\nredirects:\n  policy: follow\n")
        let ok = try CLI.run(["check-config", "--config", good])
        #expect(ok.status == 0)
        #expect(ok.output.contains("configuration OK"))
        let bad = try CLI.temporaryFile("listen: 127.0.0.1:9999\ntimeouts:\n  client_idel: 5s\n")
        defer { CLI.remove(good, bad) }
        let failed = try CLI.run(["check-config", "--config", bad])
        #expect(failed.status != 0)
        #expect(failed.output.contains("\(bad):3: timeouts.client_idel: unknown key"))
        #expect(failed.output.contains("did you mean timeouts.client_idle"))
        // What serve would refuse to start with is no OK either: an open LAN listener.
        let open = try CLI.temporaryFile("listen: 0.0.0.0:9999\n")
        defer { CLI.remove(open) }
        let refused = try CLI.run(["check-config", "--config", open])
        #expect(refused.status == 1 && refused.output.contains("not listening on 0.0.0.0:9999"), "\(refused.output)")
        #expect(!refused.output.contains("configuration OK"))
    }

    @Test("check-config --reference lists every key")
    func reference() throws {
        let result = try CLI.run(["check-config", "--reference"])
        #expect(result.status == 0)
        #expect(result.output.contains("`timeouts.client_header`"))
        #expect(result.output.contains("`redirects.policy`"))
    }

    @Test("serve proxies requests and exits 0 on SIGTERM after finishing")
    func serveAndStop() throws {
        let origin = try OriginServer { _ in .text("through the binary") }
        defer { origin.stop() }
        let probe = try TestListener()
        let port = probe.port
        probe.closeUnused()
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--admin-listen", ""]
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        process.currentDirectoryURL = directory
        process.environment = CLI.environment(dataHome: directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let client = try CLI.connect(port)
        let response = try client.request(RawClient.get(origin.url("/cli")))
        #expect(response.text == "through the binary")
        // Access lines are buffered (LogOutput): a SIGTERM right after loses none of them. (100
        // lines: nobody reads the pipe before the exit, and a full pipe would block the proxy.)
        for n in 0..<100 { _ = try client.request(RawClient.get(origin.url("/cli/\(n)"))) }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("\"GET \(origin.url("/cli"))\" 200"))
        #expect((0..<100).allSatisfy { log.contains("\"GET \(origin.url("/cli/\($0)"))\" 200") })
        #expect(log.contains("sluice stopped"))
        #expect(log.hasSuffix("\n"))
    }

    @Test("SIGHUP reloads the rules; a broken file keeps the current ones and says why")
    func reloadOnHangup() throws {
        let origin = try OriginServer { _ in .text("<p>html</p>") }
        defer { origin.stop() }
        let strict = """
            rules:
              - name: api
                match: { path: "/v1/**" }
                accept: { content_types: [application/json] }
            """
        let file = try CLI.temporaryFile(strict)
        defer { CLI.remove(file) }
        let (process, pipe, port) = try CLI.serve(["--config", file])
        defer { if process.isRunning { process.terminate() } }
        let output = OutputCollector(pipe)
        let client = try CLI.connect(port)
        #expect(try client.request(RawClient.get(origin.url("/v1/a"))).status == 502)
        try "rules:\n  - name: api\n    match: { path: \"/v1/[\" }\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(eventually { output.text.contains("reload failed") }, "the reload was not tried")
        #expect(try client.request(RawClient.get(origin.url("/v1/a"))).status == 502)
        try "rules: []\n".write(toFile: file, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(eventually { output.text.contains("reloaded 0 rule(s)") }, "the reload was not done")
        #expect(try client.request(RawClient.get(origin.url("/v1/a"))).status == 200)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        _ = eventually { output.text.contains("sluice stopped") }
        let log = output.text
        #expect(log.contains("reload failed, keeping the current rules"))
        #expect(log.contains("rules[0].match.path"))
        #expect(log.contains("reloaded 0 rule(s)"))
        // The reload applied the same --listen and --admin-listen: nothing else looks changed.
        #expect(!log.contains("need a restart"), "\(log)")
    }
}
