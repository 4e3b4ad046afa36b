import Foundation
import SQLite
import SluiceTestKit
import Testing

/// A cache file that cannot grow (`ulimit -f`, as a full disk or quota looks to the process):
/// every response is still delivered whole, what could not be stored is skipped, and the file
/// stays intact.
@Suite("Disk full")
struct DiskFullTests {
    @Test("With the cache file capped at 3 MiB, 1 MiB responses keep flowing and nothing half-written is served")
    func deliveryContinues() throws {
        let bodies = (0..<8).map { CrashSafetyTests.pattern(seed: 500 + $0, size: (1 << 20) + $0 * 1000) }
        let origin = try OriginServer { request in
            guard let index = Int(request.target.split(separator: "/").last ?? ""), index < bodies.count else {
                return .text("small and fine", headers: [("Cache-Control", "max-age=600")])
            }
            return .respond(
                status: 200, headers: [("Cache-Control", "max-age=600"), ("Content-Type", "application/octet-stream")],
                body: bodies[index])
        }
        defer { origin.stop() }
        let directory = try CLI.workingDirectory()
        let file = directory.appendingPathComponent("full.sqlite").path
        let config = try CLI.temporaryFile("cache: { path: \(file), capacity: 1GiB }\nlog: { access: false }\n")
        defer { CLI.remove(config, directory.path) }
        let (process, pipe, port) = try CLI.serve(["--config", config], fileSizeLimitKiB: 3072)
        let output = OutputCollector(pipe)
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        let client = try CLI.connect(port)
        for round in 0..<2 {
            for (index, body) in bodies.enumerated() {
                let response = try client.request(RawClient.get(origin.url("/body/\(index)")))
                #expect(response.status == 200, "round \(round) body \(index)")
                #expect(response.body == body, "round \(round) body \(index): \(response.body.count) bytes")
            }
            #expect(try client.request(RawClient.get(origin.url("/small"))).text == "small and fine")
        }
        #expect(process.isRunning)
        // Some bodies did not fit: those were fetched twice; the ones that fit were hits.
        let fetched = origin.requests.filter { $0.target.hasPrefix("/body/") }.count
        #expect(fetched > bodies.count, "every body fit in 3 MiB?")
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output.text.suffix(2000))")
        let database = try Database(path: file)
        let check = try database.prepare("PRAGMA integrity_check")
        #expect(try check.step())
        #expect(check.text(at: 0) == "ok")
        print(
            "disk-full: \(fetched) origin fetches for \(bodies.count * 2) requests; log: \(output.text.split(separator: "\n").filter { $0.contains("cache") }.prefix(3))"
        )
    }
}

/// Collects a process's output as it arrives.
final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            self.lock.lock()
            self.data += chunk
            self.lock.unlock()
        }
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
