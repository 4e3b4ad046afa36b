import Foundation
import SluiceTestKit
import Testing

/// `sluice breakpoint add|list|rm` and `sluice paused list|resume|abort` against a running
/// `sluice serve` (its configuration's admin port and token), with a breakpoint from the file.
@Suite("sluice breakpoint and sluice paused")
struct BreakpointCommandTests {
    @Test(
        "A breakpoint from the file pauses curl's request; paused list shows it; resume with a header and a body; add, list, rm; abort"
    )
    func commands() throws {
        let directory = try CLI.workingDirectory()
        defer { CLI.remove(directory.path) }
        let origin = try OriginServer { request in
            .text(
                "\(request.method) \(request.header("x-set") ?? "-") \(String(decoding: request.body, as: UTF8.self))")
        }
        defer { origin.stop() }
        let probe = try TestListener()
        let adminPort = probe.port
        probe.closeUnused()
        let config = directory.appendingPathComponent("sluice.yaml").path
        try """
        admin: { listen: "127.0.0.1:\(adminPort)", token: "s3cret" }
        breakpoints:
          timeout: 30s
          points:
            - { name: posts, stage: request, match: { path: /posts, methods: [POST] }, body_contains: draft }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (process, _, port) = try CLI.serve(["--config", config, "--admin-listen", "127.0.0.1:\(adminPort)"])
        defer { process.terminate() }
        _ = try CLI.connect(port)
        _ = try CLI.connect(adminPort)
        nonisolated(unsafe) var answer = (status: Int32(-1), output: "")
        let client = Thread {
            answer =
                (try? runProgram(
                    "curl",
                    [
                        "-s", "-m", "20", "-x", "http://127.0.0.1:\(port)", "--data-binary", "a draft",
                        origin.url("/posts"),
                    ],
                    dropErrors: true)) ?? answer
        }
        client.start()
        var listed = (status: Int32(0), output: "")
        _ = try eventually(timeout: 10, every: 0.1) {
            listed = try CLI.run(["paused", "list", "--config", config])
            return listed.output.contains("posts")
        }
        #expect(listed.output.hasPrefix("1\trequest at posts\tPOST \(origin.url("/posts"))"), "\(listed.output)")
        let body = try CLI.temporaryFile("the final text")
        defer { CLI.remove(body) }
        // A body file that is not there (66) and a field without "=" (a usage error, 64) decide nothing.
        let missing = try CLI.run(["paused", "resume", "1", "--body", "/nonexistent/body", "--config", config])
        #expect(missing.status == 66 && missing.output.contains("cannot read the body file /nonexistent/body"))
        #expect(!missing.output.contains("NSCocoaErrorDomain"), "\(missing.output)")
        let usage = try CLI.run(["paused", "resume", "1", "--header", "NoEquals", "--config", config])
        #expect(usage.status == 64 && usage.output.contains("--header is NAME=VALUE"), "\(usage.output)")
        let resumed = try CLI.run([
            "paused", "resume", "1", "--header", "X-Set=yes", "--body", body, "--config", config,
        ])
        #expect(resumed.status == 0 && resumed.output == "paused item 1 resumed with edits\n", "\(resumed.output)")
        _ = eventually(timeout: 10) { answer.status == 0 }
        #expect(answer.output == "POST yes the final text", "\(answer.output)")
        // Live: add, list, remove.
        let added = try CLI.run([
            "breakpoint", "add", "errors", "--stage", "response", "--path", "/api/**", "--status", "5xx", "--config",
            config,
        ])
        #expect(added.status == 0 && added.output.hasPrefix("breakpoint errors set:"), "\(added.output)")
        let all = try CLI.run(["breakpoint", "list", "--config", config])
        #expect(
            all.output.contains("posts\t") && all.output.contains("errors\t") && all.output.contains("5xx"),
            "\(all.output)")
        let messages = try CLI.run([
            "breakpoint", "add", "chat", "--stage", "messages", "--direction", "send", "--message-type", "text",
            "--path", "/chat", "--config", config,
        ])
        #expect(messages.status == 0 && messages.output.contains("direction send"), "\(messages.output)")
        #expect(try CLI.run(["breakpoint", "rm", "chat", "--config", config]).status == 0)
        let bad = try CLI.run(["breakpoint", "add", "oops", "--status", "200", "--config", config])
        #expect(bad.status != 0 && bad.output.contains("response conditions"), "\(bad.output)")
        #expect(try CLI.run(["breakpoint", "rm", "errors", "--config", config]).status == 0)
        #expect(try CLI.run(["breakpoint", "rm", "errors", "--config", config]).status != 0)
        // Abort: curl sees the 502 problem.
        nonisolated(unsafe) var aborted = (status: Int32(-1), output: "")
        let second = Thread {
            aborted =
                (try? runProgram(
                    "curl",
                    [
                        "-s", "-m", "20", "-w", "|%{http_code}", "-x", "http://127.0.0.1:\(port)", "--data-binary",
                        "draft 2", origin.url("/posts"),
                    ],
                    dropErrors: true)) ?? aborted
        }
        second.start()
        _ = try eventually(timeout: 10, every: 0.1) {
            try CLI.run(["paused", "list", "--config", config]).output.contains("posts")
        }
        let abort = try CLI.run(["paused", "abort", "2", "--config", config])
        #expect(abort.status == 0, "\(abort.output)")
        _ = eventually(timeout: 10) { aborted.status == 0 }
        #expect(aborted.output.hasSuffix("|502") && aborted.output.contains("breakpoint-aborted"), "\(aborted.output)")
        #expect(origin.requests.count == 1)
    }
}
