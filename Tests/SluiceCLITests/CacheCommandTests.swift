import Foundation
import SQLite
import SluiceTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sluice cache …` against a cache filled by real exchanges through a running `sluice serve`.
@Suite("sluice cache")
struct CacheCommandTests {
    static let json = Array(#"{"id":1,"name":"first","missing":null}"#.utf8)

    static func origin() throws -> OriginServer {
        try OriginServer { request in
            switch request.target {
            case "/api/item":
                return .respond(
                    status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "max-age=600")],
                    body: json)
            case "/page":
                return .respond(
                    status: 200,
                    headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "max-age=1")],
                    body: Array("<p>page</p>".utf8))
            case "/lang":
                return .respond(
                    status: 200,
                    headers: [
                        ("Content-Type", "text/plain"), ("Cache-Control", "max-age=600"), ("Vary", "Accept-Language"),
                    ],
                    body: Array((request.header("accept-language") ?? "none").utf8))
            default:
                return .respond(status: 200, headers: [("Cache-Control", "no-store")], body: Array("secret".utf8))
            }
        }
    }

    /// `sluice serve` on a cache file in a folder of its own (`cache:` holds `path` plus
    /// `cacheLines`), stopped and removed with its folder when released.
    final class ServedCache {
        let directory: URL
        let file: String
        let config: String
        let port: UInt16
        private let process: Process

        init(cacheLines: String = "") throws {
            directory = try CLI.workingDirectory()
            file = directory.appendingPathComponent("cache.sqlite").path
            config = try CLI.temporaryFile("cache:\n  path: \(file)\n\(cacheLines)log: { access: false }\n")
            let pipe: Pipe
            (process, pipe, port) = try CLI.serve(["--config", config])
            pipe.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        }

        /// Stops the proxy (it writes its counts on the way out).
        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }

        deinit {
            stop()
            CLI.remove(config, directory.path)
        }
    }

    /// Runs `sluice cache ARGS --config CONFIG --json` and parses its output.
    static func json(_ arguments: [String], config: String) throws -> (Int32, Any?) {
        let (status, output) = try CLI.run(["cache"] + arguments + ["--config", config, "--json"])
        return (status, try? JSONSerialization.jsonObject(with: Data(output.utf8)))
    }

    @Test("list, show, stats, why, verify and purge, on a running proxy's file")
    func commands() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let served = try ServedCache()
        let (directory, config) = (served.directory, served.config)
        let client = try CLI.connect(served.port)
        for (path, extra) in [
            ("/api/item", ""), ("/page", ""), ("/lang", "Accept-Language: de\r\n"),
            ("/lang", "Accept-Language: fr\r\n"),
            ("/secret", ""),
        ] {
            #expect(try client.request(RawClient.get(origin.url(path), extra: extra)).status == 200)
        }
        // Storing decisions are written once a second: wait until the file has the refusal.
        #expect(
            try eventually(timeout: 10, every: 0.1) {
                let (_, decided) = try Self.json(["why", origin.url("/secret")], config: config)
                return (decided as? [String: Any])?["reason"] as? String == "no-store"
            })

        let (listed, all) = try Self.json(["list"], config: config)
        #expect(listed == 0)
        let entries = try #require(all as? [[String: Any]])
        #expect(entries.count == 4)
        #expect(Set(entries.compactMap { $0["url"] as? String }).count == 3)
        let item = try #require(entries.first { ($0["url"] as? String) == origin.url("/api/item") })
        #expect(item["status"] as? Int == 200)
        #expect(item["size"] as? Int == Self.json.count)
        #expect(item["fresh"] as? Bool == true)
        #expect(item["lifetime"] as? Int == 600)
        #expect(item["lifetime_source"] as? String == "max-age")
        #expect(item["content_type"] as? String == "application/json")

        let (_, filtered) = try Self.json(["list", "--url", "*/lang", "--sort", "size"], config: config)
        #expect((filtered as? [[String: Any]])?.count == 2)
        let (_, html) = try Self.json(["list", "--content-type", "TEXT/HTML"], config: config)
        #expect((html as? [[String: Any]])?.count == 1)
        let (_, limited) = try Self.json(["list", "--limit", "1"], config: config)
        #expect((limited as? [[String: Any]])?.count == 1)

        let (_, variants) = try Self.json(["show", origin.url("/lang")], config: config)
        let shown = try #require(variants as? [[String: Any]])
        #expect(Set(shown.compactMap { $0["variant"] as? String }) == ["accept-language:de", "accept-language:fr"])
        #expect((shown.first?["headers"] as? [[String]])?.contains(["Vary", "Accept-Language"]) == true)

        let (rawStatus, raw) = try CLI.run(["cache", "show", origin.url("/api/item"), "--raw", "--config", config])
        #expect(rawStatus == 0)
        #expect(Array(raw.utf8) == Self.json)
        let (_, pretty) = try CLI.run(["cache", "show", origin.url("/api/item"), "--pretty", "--config", config])
        #expect(pretty.contains("{\n  \"id\": 1,\n  \"name\": \"first\",\n  \"missing\": null\n}"), "\(pretty)")

        let (_, inBody) = try Self.json(["search", "\"name\":\"first\"", "--in", "body"], config: config)
        #expect((inBody as? [[String: Any]])?.compactMap { $0["url"] as? String } == [origin.url("/api/item")])
        let (_, inHeaders) = try Self.json(["search", "ACCEPT-LANGUAGE", "--in", "headers"], config: config)
        #expect((inHeaders as? [[String: Any]])?.count == 2)
        let (_, anywhere) = try Self.json(["search", "page"], config: config)
        let pageHits = try #require(anywhere as? [[String: Any]])
        #expect(pageHits.count == 1)
        #expect(Set(pageHits.first?["found_in"] as? [String] ?? []) == ["url", "body"])

        let (_, statsObject) = try Self.json(["stats"], config: config)
        let stats = try #require(statsObject as? [String: Any])
        #expect(stats["entries"] as? Int == 4)
        #expect((stats["top_hosts"] as? [[String: Any]])?.first?["host"] as? String == "127.0.0.1")

        let (_, whyObject) = try Self.json(["why", origin.url("/secret")], config: config)
        let why = try #require(whyObject as? [String: Any])
        #expect(why["stored"] as? Bool == false)
        #expect(why["reason"] as? String == "no-store")
        let (_, storedWhy) = try Self.json(["why", origin.url("/api/item")], config: config)
        #expect((storedWhy as? [String: Any])?["stored"] as? Bool == true)

        let (verified, report) = try Self.json(["verify"], config: config)
        #expect(verified == 0)
        #expect((report as? [String: Any])?["sound"] as? Bool == true)

        // HAR 1.2, valid against the schema, loadable by devtools.
        let har = directory.appendingPathComponent("cache.har").path
        let (exported, _) = try CLI.run(["cache", "export", "--har", har, "--config", config])
        #expect(exported == 0)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har)))
        let schema = try SchemaValidator(
            file: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Resources/har-1.2.schema.json").path)
        #expect(schema.validate(document) == [])
        #expect(schema.validate(["log": ["version": "1.1", "entries": [["time": -1]]]]).count >= 3)
        // `--har -` writes the same document to standard output (its count goes to standard error).
        let piped = try runProgram(
            CLI.binary.path, ["cache", "export", "--har", "-", "--config", config], environment: CLI.environment(),
            dropErrors: true)
        #expect(piped.status == 0)
        let pipedDocument = try JSONSerialization.jsonObject(with: Data(piped.output.utf8))
        #expect(schema.validate(pipedDocument) == [])
        #expect(!FileManager.default.fileExists(atPath: "-"))
        let harEntries = try #require(
            ((document as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(harEntries.count == 4)
        let itemEntry = try #require(
            harEntries.first { ($0["request"] as? [String: Any])?["url"] as? String == origin.url("/api/item") })
        let content = (itemEntry["response"] as? [String: Any])?["content"] as? [String: Any]
        #expect(content?["text"] as? String == String(decoding: Self.json, as: UTF8.self))
        #expect(content?["mimeType"] as? String == "application/json")
        let variantHeaders = harEntries.compactMap {
            ($0["request"] as? [String: Any])?["headers"] as? [[String: String]]
        }
        .flatMap { $0 }.filter { $0["name"] == "accept-language" }.compactMap { $0["value"] }
        #expect(Set(variantHeaders) == ["de", "fr"])
        let (_, filteredHAR) = try Self.json(["export", "--har", har, "--url", "*/page"], config: config)
        #expect((filteredHAR as? [String: Any])?["entries"] as? Int == 1)

        // Inspection changed nothing: the proxy still serves from the file...
        let hit = try client.request(RawClient.get(origin.url("/api/item")))
        #expect(hit.header("cache-status")?.hasPrefix("Sluice; hit") == true)
        // ...and a purge takes effect at once on the running proxy.
        let (purgedStatus, purged) = try Self.json(["purge", origin.url("/lang")], config: config)
        #expect(purgedStatus == 0)
        #expect((purged as? [String: Any])?["purged"] as? Int == 2)
        let after = try client.request(RawClient.get(origin.url("/lang"), extra: "Accept-Language: de\r\n"))
        #expect(after.header("cache-status") == "Sluice; fwd=uri-miss; stored")
        let (_, remaining) = try Self.json(["purge", "--host", "127.0.0.1"], config: config)
        #expect((remaining as? [String: Any])?["purged"] as? Int == 3)
        let (_, empty) = try Self.json(["list"], config: config)
        #expect((empty as? [Any])?.isEmpty == true)

        // Hit ratio: lookups are counted by the proxy and written with the hit counts (at the
        // latest when it stops): 1 hit, and 6 requests that went upstream.
        served.stop()
        let (_, finalStats) = try Self.json(["stats"], config: config)
        let final = try #require(finalStats as? [String: Any])
        #expect((final["lookups"] as? [String: Any])?["hits"] as? Int == 1)
        #expect((final["lookups"] as? [String: Any])?["misses"] as? Int == 6)
        #expect(abs((final["hit_ratio"] as? Double ?? 0) - 1.0 / 7.0) < 0.001)
    }

    @Test("With a shared tier: list and show say which tiers hold an entry, stats counts the shared tier's entries")
    func tiers() throws {
        guard RedisServer.isInstalled else {
            Issue.record("redis-server is not installed (scripts/setup.sh --tests installs it)")
            return
        }
        let redis = try RedisServer()
        let origin = try Self.origin()
        defer { origin.stop() }
        let served = try ServedCache(
            cacheLines: "  shared: { url: \"redis://127.0.0.1:\(redis.port)/0\", timeout: 300ms }\n")
        let (config, port) = (served.config, served.port)
        let url = origin.url("/api/item")
        // The first request may come before the tier is connected: ask until the entry is shared.
        #expect(
            try eventually(timeout: 10, every: 0.1) {
                _ = try CLI.connect(port).request(RawClient.get(url, extra: "Cache-Control: no-cache\r\n"))
                return (try? redis.command(["DBSIZE"])) == ":2"
            })
        let (_, listed) = try Self.json(["list"], config: config)
        let first = (listed as? [[String: Any]])?.first
        #expect(first?["tiers"] as? [String] == ["local", "shared"] && first?["shared"] as? Bool == true)
        let (_, table) = try CLI.run(["cache", "list", "--config", config])
        #expect(table.contains("TIERS") && table.contains("local+shared"), "\(table)")
        let (_, shown) = try CLI.run(["cache", "show", url, "--config", config])
        #expect(shown.contains("tiers      local and shared"), "\(shown)")
        let (_, stats) = try CLI.run(["cache", "stats", "--config", config])
        #expect(stats.contains("shared     1 entry on redis://127.0.0.1:\(redis.port)/0"), "\(stats)")
        let (_, statsObject) = try Self.json(["stats"], config: config)
        #expect(((statsObject as? [String: Any])?["shared"] as? [String: Any])?["entries"] as? Int == 1)
        // Bytes as the capacity counts them (head, URL and key with the body), as /stats says.
        let body = first?["size"] as? Int ?? 0
        #expect(((statsObject as? [String: Any])?["bytes"] as? Int ?? 0) > body, "\(statsObject) \(body)")

        // Another instance's file does not have it; `show` finds it in the shared tier.
        let other = try ServedCache(
            cacheLines: "  shared: { url: \"redis://127.0.0.1:\(redis.port)/0\", timeout: 300ms }\n")
        _ = try CLI.connect(other.port)  // listening: its file is there
        let (shownStatus, sharedOnly) = try CLI.run(["cache", "show", url, "--config", other.config])
        #expect(shownStatus == 0 && sharedOnly.contains("in the shared tier only"), "\(sharedOnly)")
        #expect(sharedOnly.contains("status     200 OK") && sharedOnly.contains("tiers      shared"), "\(sharedOnly)")
        let (_, sharedJSON) = try Self.json(["show", url], config: other.config)
        #expect(((sharedJSON as? [[String: Any]])?.first?["tiers"] as? [String]) == ["shared"])
        let (missingStatus, missing) = try CLI.run(["cache", "show", origin.url("/never"), "--config", other.config])
        #expect(missingStatus != 0 && missing.contains("in this file or the shared tier"), "\(missing)")

        // The tier gone: the local file still answers, and says it could not ask.
        redis.stop()
        let (status, unknown) = try CLI.run(["cache", "list", "--config", config])
        #expect(status == 0 && unknown.contains("local, shared?"), "\(unknown)")
        let (_, statsDown) = try CLI.run(["cache", "stats", "--config", config])
        #expect(statsDown.contains("entries    1") && statsDown.contains("not reached"), "\(statsDown)")
        // A purge purges the file, says the tier was not reached, and exits 75: nothing keeps it.
        let (purgeStatus, purgeText) = try CLI.run(["cache", "purge", url, "--config", config])
        #expect(purgeStatus == 75, "\(purgeText)")
        #expect(purgeText.contains("purged 1 entry") && purgeText.contains("shared tier: not reached"), "\(purgeText)")
        #expect(purgeText.contains("run the purge again when it is back"), "\(purgeText)")
    }

    @Test("verify finds an entry whose body does not add up, and exits 1; bad arguments are explained")
    func verifyAndErrors() throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let directory = try CLI.workingDirectory()
        let file = directory.appendingPathComponent("cache.sqlite").path
        let config = try CLI.temporaryFile("cache: { path: \(file) }\n")
        defer { CLI.remove(config, directory.path) }
        let (missingStatus, missing) = try CLI.run(["cache", "list", "--config", config])
        #expect(missingStatus == 66)
        #expect(missing.contains("no cache at"))
        do {
            let (process, pipe, port) = try CLI.serve(["--config", config])
            pipe.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
            _ = try CLI.connect(port).request(RawClient.get(origin.url("/api/item")))
            process.terminate()
            process.waitUntilExit()
        }
        let database = try Database(path: file)
        try database.execute("UPDATE entries SET size = size + 1")
        let (status, report) = try Self.json(["verify"], config: config)
        #expect(status == 1)
        let damaged = (report as? [String: Any])?["damaged"] as? [[String: Any]]
        #expect(damaged?.count == 1)
        #expect((damaged?.first?["problem"] as? String)?.contains("entry says") == true)
        let (sortStatus, sortText) = try CLI.run(["cache", "list", "--sort", "colour", "--config", config])
        #expect(sortStatus != 0)
        #expect(sortText.contains("--sort takes recent, size, hits or age"))
        let (purgeStatus, purgeText) = try CLI.run(["cache", "purge", "--config", config])
        #expect(purgeStatus != 0)
        #expect(purgeText.contains("say what to purge"))
    }
}
