import Codec
import Foundation
import Sluice
import SluiceTestKit
import Testing

/// OpenAPI 3.2 sequential bodies through the proxy: an event stream and JSON Lines from a real
/// origin, each item checked against `itemSchema` as it passes.
@Suite("Sequential bodies under a contract")
struct SequenceContractTests {
    static let document = """
        openapi: 3.2.0
        info: {title: feed, version: '1'}
        paths:
          /events:
            get:
              responses:
                '200':
                  description: ticks
                  content:
                    text/event-stream:
                      itemSchema:
                        type: object
                        required: [data, event]
                        properties:
                          event: {enum: [tick]}
                          data: {type: string, pattern: '^[0-9]+$'}
          /logs:
            get:
              responses:
                '200':
                  description: log lines
                  content:
                    application/jsonl:
                      itemSchema:
                        type: object
                        required: [level]
                        properties: {level: {type: integer}}
        """

    /// A proxy whose rule checks the origin's answers against ``document`` in `mode` (with a
    /// cache, or a recording, when asked).
    static func proxy(_ mode: String, directory: URL, cache: Bool = false, record: String? = nil) throws
        -> ProxyHarness
    {
        let file = directory.appendingPathComponent("feed.yaml")
        try Data(document.utf8).write(to: file)
        var yaml = """
            rules:
              - name: feed
                match: { host: "127.0.0.1" }
                contract: { openapi: \(file.path), on_violation: \(mode) }
            """
        if cache { yaml = "cache:\n  path: \(directory.appendingPathComponent("c.sqlite").path)\n" + yaml }
        var configuration = try ConfigLoader.load(yaml: yaml).loadingContracts()
        configuration.log.access = true
        if let record { configuration.record.file = record }
        return try ProxyHarness(configuration: configuration)
    }

    static func scratch() throws -> URL {
        let directory = TestScratch.root.appendingPathComponent("sluice-sequence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static let events: [[UInt8]] = [
        "event: tick\ndata: 1\n\n", ": keep-alive\n\n", "event: tick\ndata: 2\n\n",
        "event: tick\ndata: NOT A NUMBER\n\n", "event: tick\ndata: 4\n\n",
    ].map { Array($0.utf8) }

    @Test("enforce: the events before a broken one reach the client as they come; the stream is cut before it")
    func enforceCutsTheStream() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Given an origin that sends each event only once the client has the one before it
        // (a proxy that held the stream would never see the next one come).
        let gates = (0..<Self.events.count).map { _ in DispatchSemaphore(value: 0) }
        let origin = try OriginServer { _ in
            .chunkedGated(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")],
                chunks: Self.events, gate: { _ = gates[$0].wait(timeout: .now() + 5) })
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("enforce", directory: directory)
        let client = try RawClient(port: proxy.port)
        // When the client reads the events as they come.
        try client.send(RawClient.get(origin.url("/events")))
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        for (index, wanted) in ["data: 1", "data: 2"].enumerated() {
            while try client.reader.readEventLine() != wanted {}
            // The comment after event 1, then event 2; then the broken one.
            gates[index + 1].signal()
            if index == 0 {
                gates[2].signal()
            } else {
                gates[3].signal()
            }
        }
        gates[4].signal()
        // Then what follows event 2 holds neither the broken event nor the one after it, and the
        // stream ends without its last chunk.
        let rest = String(decoding: try client.reader.readToEnd(), as: UTF8.self)
        #expect(!rest.contains("NOT A NUMBER") && !rest.contains("data: 4"), "\(rest)")
        #expect(!rest.hasSuffix("0\r\n\r\n"), "\(rest)")
        #expect(proxy.waitUntil { proxy.stats.contractFailed == 1 })
        #expect(
            proxy.waitUntil { proxy.logLines.all.contains { $0.contains("contract=\"1:/2/data:pattern") } },
            "\(proxy.logLines.all)")
    }

    @Test("report: the whole stream passes, its broken event counted with its index")
    func reportPassesTheStream() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try OriginServer { _ in
            .chunked(
                status: 200, headers: [("Content-Type", "text/event-stream; charset=utf-8")], chunks: Self.events)
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("report", directory: directory)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/events")))
        #expect(response.status == 200)
        #expect(response.body == Self.events.flatMap { $0 })
        #expect(proxy.waitUntil { proxy.stats.contractFailed == 1 })
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("contract=\"1:/2/data:pattern") } })
    }

    @Test("enforce: JSON Lines whose length is announced are held, and a broken line answers 502")
    func enforceHoldsAnnouncedLines() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = "{\"level\": 1}\n{\"level\": 2}\n"
        let origin = try OriginServer { request in
            .respond(
                status: 200, headers: [("Content-Type", "application/jsonl")],
                body: Array((request.target.hasSuffix("bad") ? good + "{\"level\": \"x\"}\n" : good).utf8))
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("enforce", directory: directory)
        let client = try RawClient(port: proxy.port)
        let passed = try client.request(RawClient.get(origin.url("/logs")))
        #expect(passed.status == 200)
        #expect(String(decoding: passed.body, as: UTF8.self) == good)
        #expect(passed.header("sluice-validation")?.hasPrefix("passed; reason=\"contract\"") == true)
        let refused = try client.request(RawClient.get(origin.url("/logs?bad")))
        #expect(refused.status == 502)
        let problem = try #require(try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])
        let first = try #require((problem["violations"] as? [[String: Any]])?.first)
        #expect(first["pointer"] as? String == "/2/level" && first["keyword"] as? String == "type", "\(problem)")
    }

    @Test("enforce: a gzip-coded event stream is checked as it is decoded, and cut before the broken event")
    func enforceCutsACompressedStream() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Each event a gzip member of its own (RFC 1952 §2.2: members follow one another), so
        // that each chunk decodes to whole events.
        let pieces = Self.events.map { ContentCoding.gzip.encode($0) }
        let origin = try OriginServer { _ in
            .chunkedPaced(
                status: 200,
                headers: [("Content-Type", "text/event-stream"), ("Content-Encoding", "gzip")],
                chunks: pieces, interval: 0.1)
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("enforce", directory: directory)
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/events"), extra: "Accept-Encoding: gzip\r\n"))
        let head = try #require(try client.reader.readHead())
        #expect(head.startLine.hasPrefix("HTTP/1.1 200"))
        // De-chunk what arrived (it ends cut), then decode as far as it goes.
        var wire = try client.reader.readToEnd()[...]
        var body: [UInt8] = []
        while let line = wire.firstIndex(of: 0x0A),
            let size = Int(
                String(decoding: wire[..<line], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                radix: 16), size > 0, wire.count >= line + 1 + size - wire.startIndex
        {
            let start = line + 1
            body += wire[start..<(start + size)]
            wire = wire[(start + size)...].drop { $0 == 0x0D || $0 == 0x0A }
        }
        var decoded: [UInt8] = []
        _ = body.withUnsafeBytes { RawInflater(coding: .gzip)!.feed($0) { decoded += $0 } }
        let text = String(decoding: decoded, as: UTF8.self)
        #expect(text.contains("data: 1\n\n") && text.contains("data: 2\n\n"), "\(text)")
        #expect(!text.contains("NOT A NUMBER"), "\(text)")
        #expect(proxy.waitUntil { proxy.stats.contractFailed == 1 })
    }

    @Test("enforce: whole events that came in the same read as the broken one still reach the client")
    func enforceKeepsTheItemsBeforeTheBrokenOne() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try OriginServer { _ in
            .chunkedPaced(
                status: 200, headers: [("Content-Type", "text/event-stream")],
                chunks: [Self.events[0], Array(Self.events[1...].joined())], interval: 0.1)
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("enforce", directory: directory)
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/events")))
        _ = try #require(try client.reader.readHead())
        let rest = String(decoding: try client.reader.readToEnd(), as: UTF8.self)
        #expect(rest.contains("data: 1\n\n") && rest.contains("data: 2\n\n"), "\(rest)")
        #expect(!rest.contains("NOT A NUMBER"), "\(rest)")
    }

    @Test("report: a stream the origin breaks off still has its verdict, from what was checked")
    func reportRecordsAnUnfinishedStream() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        let chunk = "event: tick\ndata: oops\n\n"
        let origin = try OriginServer { _ in
            .raw(Array((head + String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n").utf8))
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("report", directory: directory)
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/events")))
        _ = try? client.reader.readToEnd()
        #expect(proxy.waitUntil { proxy.stats.contractFailed == 1 })
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("contract=\"1:/0/data:pattern") } })
    }

    @Test("requests: enforce: a broken body whose length is announced never reaches the origin whole")
    func enforcedRequestBodyIsCutBeforeItsEnd() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("q.yaml")
        try Data(
            """
            openapi: 3.2.0
            info: {title: q, version: '1'}
            paths:
              /search:
                query:
                  requestBody:
                    required: true
                    content: {application/json: {schema: {type: object, required: [q]}}}
                  responses: {'200': {description: ok}}
            """.utf8
        ).write(to: file)
        let origin = try OriginServer { _ in .text("found") }
        defer { origin.stop() }
        var configuration = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: q
                    match: { host: "127.0.0.1" }
                    contract: { openapi: \(file.path), requests: enforce }
                """
        ).loadingContracts()
        configuration.log.access = true
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let body = #"{"z": 1}"#
        let refused = try client.request(
            "QUERY \(origin.url("/search")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(refused.status == 400)
        #expect(origin.requests.allSatisfy { $0.bodyCount < body.utf8.count }, "\(origin.requests.map(\.bodyCount))")
        let good = #"{"q": "lamp"}"#
        let passed = try RawClient(port: proxy.port).request(
            "QUERY \(origin.url("/search")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(good.utf8.count)\r\n\r\n\(good)")
        #expect(passed.status == 200)
        #expect(origin.requests.last?.bodyCount == good.utf8.count)
    }

    @Test("enforce: a recording keeps a cut stream as the origin sent it, so its report finds the violation again")
    func aCutStreamIsRecorded() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Given a recording proxy and an origin whose third event breaks the contract.
        let origin = try OriginServer { _ in
            .chunkedPaced(
                status: 200, headers: [("Content-Type", "text/event-stream")], chunks: Self.events, interval: 0.05)
        }
        defer { origin.stop() }
        let file = directory.appendingPathComponent("run.sluicerec").path
        do {
            let proxy = try Self.proxy("enforce", directory: directory, record: file)
            // When the stream is cut.
            let client = try RawClient(port: proxy.port)
            try client.send(RawClient.get(origin.url("/events")))
            _ = try client.reader.readToEnd()
            #expect(proxy.waitUntil { proxy.stats.contractFailed == 1 })
            proxy.shutdown()
        }
        // Then the recording holds the origin's stream up to the broken event, which a later
        // check finds again.
        let exchange = try #require(try Recording.open(file).exchanges(bodies: true).first)
        let body = String(decoding: exchange.responseBody, as: UTF8.self)
        #expect(exchange.status == 200 && body.contains("data: 1") && body.contains("NOT A NUMBER"), "\(body)")
    }

    @Test("report: a broken stream is stored with its verdict, as a broken body is, and served from the cache after")
    func aBrokenStreamIsStoredUnderReport() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Given a cacheable stream with a broken event under report.
        let origin = try OriginServer { _ in
            .chunked(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "max-age=300")],
                chunks: Self.events)
        }
        defer { origin.stop() }
        let proxy = try Self.proxy("report", directory: directory, cache: true)
        // When it is asked for twice.
        let first = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/events")))
        #expect(first.status == 200 && first.body == Self.events.flatMap { $0 })
        #expect(proxy.waitUntil { proxy.stats.contractFailed == 1 })
        let second = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/events")))
        // Then the second comes from the cache, whole; the origin was asked once.
        #expect(second.body == Self.events.flatMap { $0 })
        #expect(second.header("cache-status")?.contains("hit") == true, "\(second.headers)")
        #expect(origin.requests.count == 1)
    }
}
