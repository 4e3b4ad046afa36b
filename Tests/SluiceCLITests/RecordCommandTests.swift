import Foundation
import SQLite
import SluiceTestKit
import Testing

/// `sluice serve --record` and `sluice record …` as a user runs them: real processes, a real
/// origin, real recording files.
@Suite("sluice record")
struct RecordCommandTests {
    /// An origin whose answers change with `version` (a price, an added item).
    static func origin(version: Locked<Int>) throws -> OriginServer {
        try OriginServer { request in
            let v = version.withLock { $0 }
            switch request.target {
            case "/items":
                let extra = v == 2 ? #",{"id":2,"price":3}"# : ""
                return .respond(
                    status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                    body: Array(#"{"items":[{"id":1,"price":\#(v == 1 ? 10 : 12)}\#(extra)],"v":"x"}"#.utf8))
            case "/logo":
                return .respond(
                    status: 200, headers: [("Content-Type", "image/png"), ("Cache-Control", "no-store")],
                    body: [0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 255])
            case "/new" where v == 2:
                return .text("new in v2", headers: [("Cache-Control", "no-store")])
            default:
                return .text("not found", status: 404)
            }
        }
    }

    /// Runs a session through `sluice serve --record file` and stops it.
    static func record(_ file: String, origin: OriginServer, paths: [String], extra: [String] = []) throws -> String {
        let directory = try CLI.workingDirectory()
        let config = try CLI.temporaryFile("cache: { enabled: false }\nlog: { access: false }\n")
        let (process, pipe, port) = try CLI.serve(
            ["--config", config, "--record", file] + extra, currentDirectory: directory)
        let output = OutputCollector(pipe)
        let client = try CLI.connect(port)
        for path in paths { _ = try client.request(RawClient.get(origin.url(path))) }
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output.text.suffix(1500))")
        return output.text
    }

    @Test("list, show, diff of two recorded runs, export to HAR and import back: a lossless round trip")
    func listShowDiffExportImport() throws {
        let directory = try CLI.workingDirectory()
        let first = directory.appendingPathComponent("v1.sluicerec").path
        let second = directory.appendingPathComponent("v2.sluicerec").path
        let version = Locked(1)
        let origin = try Self.origin(version: version)
        defer { origin.stop() }
        _ = try Self.record(first, origin: origin, paths: ["/items", "/logo"])
        version.withLock { $0 = 2 }
        _ = try Self.record(second, origin: origin, paths: ["/items", "/logo", "/new"])

        let list = try CLI.run(["record", "list", first])
        #expect(list.status == 0)
        let lines = list.output.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("#1\tGET\t200\t") && lines[0].hasSuffix(origin.url("/items")))
        let show = try CLI.run(["record", "show", first, "1"])
        #expect(show.output.contains("\"price\": 10") && show.output.contains("Content-Type: application/json"))
        let raw = try CLI.run(["record", "show", first, "2", "--body"])
        #expect(Array(raw.output.utf8.prefix(4)) == [0x89, 0x50, 0x4E, 0x47] || raw.output.contains("PNG"))

        let diff = try CLI.run(["record", "diff", first, second])
        #expect(diff.status == 1)
        #expect(diff.output.contains("~ GET \(origin.url("/items"))"))
        #expect(diff.output.contains("/items/0/price: 10 → 12"))
        #expect(diff.output.contains("/items/1: added {\"id\":2,\"price\":3}"))
        #expect(diff.output.contains("+ GET \(origin.url("/new")) (200)"))
        #expect(!diff.output.contains("/logo"))
        let ignored = try CLI.run(["record", "diff", first, second, "--ignore", "/items"])
        #expect(!ignored.output.contains("price") && ignored.output.contains("+ GET"))

        let har = directory.appendingPathComponent("v1.har").path
        let export = try CLI.run(["record", "export", first, "--har", "-o", har])
        #expect(export.status == 0, "\(export.output)")
        let document =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any]
        let entries = (document?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 2)
        let logo = (entries?[1]["response"] as? [String: Any])?["content"] as? [String: Any]
        #expect(logo?["encoding"] as? String == "base64" && logo?["text"] as? String == "iVBORwABAv8=")
        let copy = directory.appendingPathComponent("copy.sluicerec").path
        let imported = try CLI.run(["record", "import", har, copy])
        #expect(imported.status == 0 && imported.output.contains("imported 2 exchange(s)"), "\(imported.output)")
        let same = try CLI.run(["record", "diff", first, copy])
        #expect(same.status == 0 && same.output.contains("no differences (2 exchange(s) compared)"), "\(same.output)")
    }

    @Test("A broken HAR is refused with the entry and field at fault, and nothing of it is imported")
    func brokenHARRefused() throws {
        let directory = try CLI.workingDirectory()
        let target = directory.appendingPathComponent("target.sluicerec").path
        let good = #"""
            {"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[
             {"startedDateTime":"2026-11-26T09:00:00.000Z","time":5,"request":{"method":"GET","url":"http://127.0.0.1:9/a","headers":[{"name":"Cookie","value":"sid=secret"}]},
              "response":{"status":200,"statusText":"OK","headers":[{"name":"Content-Type","value":"text/plain"}],"content":{"size":2,"text":"ok"}}}
            ]}}
            """#
        let goodFile = directory.appendingPathComponent("good.har").path
        try good.write(toFile: goodFile, atomically: true, encoding: .utf8)
        #expect(try CLI.run(["record", "import", goodFile, target]).status == 0)
        let cases: [(String, String)] = [
            (String(good.prefix(good.count / 2)), "not JSON"),
            (#"{"entries":[]}"#, "not a HAR"),
            (
                good.replacingOccurrences(of: #""text":"ok"}"#, with: #""text":"o!k","encoding":"base64"}"#),
                "log.entries[0].response.content.text: invalid base64"
            ),
            (
                good.replacingOccurrences(of: #"]}}"#, with: #",{"request":{"method":"GET"}}]}}"#),
                "log.entries[1].response: expected an object"
            ),
            (good.replacingOccurrences(of: "2026-11-26T09", with: "yesterday"), "log.entries[0].startedDateTime"),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let file = directory.appendingPathComponent("bad\(index).har").path
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try CLI.run(["record", "import", file, target])
            #expect(result.status == 1, "case \(index)")
            #expect(result.output.contains(message), "case \(index): \(result.output)")
            let fresh = directory.appendingPathComponent("fresh\(index).sluicerec").path
            _ = try CLI.run(["record", "import", file, fresh])
            #expect(!FileManager.default.fileExists(atPath: fresh), "case \(index) left a file behind")
        }
        let list = try CLI.run(["record", "list", target])
        #expect(list.output.split(separator: "\n").count == 1, "\(list.output)")
        let shown = try CLI.run(["record", "show", target, "1"])
        #expect(shown.output.contains("Cookie: [redacted]") && !shown.output.contains("secret"), "\(shown.output)")
        let notRecording = try CLI.run(["record", "list", goodFile])
        #expect(
            notRecording.status == 1 && notRecording.output.contains("not a Sluice recording"), "\(notRecording.output)"
        )
    }

    @Test("A recording survives SIGKILL: the batches written before it are whole and readable")
    func killed() throws {
        let origin = try OriginServer { request in
            .text("answer for \(request.target)", headers: [("Cache-Control", "no-store")])
        }
        defer { origin.stop() }
        let directory = try CLI.workingDirectory()
        let file = directory.appendingPathComponent("killed.sluicerec").path
        let config = try CLI.temporaryFile("cache: { enabled: false }\nlog: { access: false }\n")
        let (process, pipe, port) = try CLI.serve(["--config", config, "--record", file], currentDirectory: directory)
        _ = OutputCollector(pipe)
        let client = try CLI.connect(port)
        for index in 0..<200 { _ = try client.request(RawClient.get(origin.url("/k\(index)"))) }
        // The first 200 reach the file (read while the proxy writes it, as another process may).
        #expect(
            try eventually(timeout: 10, every: 0.1) {
                try CLI.run(["record", "list", file]).output.split(separator: "\n").count >= 200
            })
        for index in 200..<260 { _ = try client.request(RawClient.get(origin.url("/k\(index)"))) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let list = try CLI.run(["record", "list", file])
        let lines = list.output.split(separator: "\n")
        #expect(list.status == 0 && lines.count >= 200 && lines.count <= 260, "\(list.output.suffix(500))")
        // In order, none half-written.
        for (index, line) in lines.enumerated() {
            #expect(line.hasPrefix("#\(index + 1)\tGET\t200\t") && line.hasSuffix("/k\(index)"), "\(line)")
        }
        let database = try Database(path: file, readOnly: true)
        let check = try database.prepare("PRAGMA integrity_check")
        #expect(try check.step() && check.text(at: 0) == "ok")
    }

    @Test("A recording that fills the disk (ulimit -f) stops once, the proxy goes on, the file stays readable")
    func diskFull() throws {
        let big = Array(repeating: UInt8(ascii: "z"), count: 100_000)
        let origin = try OriginServer { _ in .respond(status: 200, headers: [("Cache-Control", "no-store")], body: big)
        }
        defer { origin.stop() }
        let directory = try CLI.workingDirectory()
        let file = directory.appendingPathComponent("full.sluicerec").path
        let config = try CLI.temporaryFile("cache: { enabled: false }\nlog: { access: false }\n")
        let (process, pipe, port) = try CLI.serve(
            ["--config", config, "--record", file], fileSizeLimitKiB: 1024, currentDirectory: directory)
        let output = OutputCollector(pipe)
        let client = try CLI.connect(port)
        for index in 0..<30 {
            let response = try client.request(RawClient.get(origin.url("/z\(index)")))
            #expect(response.status == 200 && response.body.count == big.count, "request \(index)")
            // Written (one batch each, so that some fit before the limit), or the recording stopped.
            #expect(
                try eventually(every: 0.02) {
                    try output.text.contains("recording stopped")
                        || CLI.run(["record", "list", file]).output.split(separator: "\n").count > index
                })
        }
        #expect(process.isRunning)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output.text.suffix(1500))")
        #expect(output.text.components(separatedBy: "recording stopped").count == 2, "\(output.text.suffix(1500))")
        let list = try CLI.run(["record", "list", file])
        let count = list.output.split(separator: "\n").count
        #expect(list.status == 0 && count > 0 && count < 30, "\(list.output)")
        let database = try Database(path: file, readOnly: true)
        let check = try database.prepare("PRAGMA integrity_check")
        #expect(try check.step() && check.text(at: 0) == "ok")
    }
}
