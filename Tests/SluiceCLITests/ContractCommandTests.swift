import Foundation
import SluiceTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sluice contract …` with the shop document copied next to a configuration, and a cache
/// filled through a running `sluice serve`.
@Suite("sluice contract")
struct ContractCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/contracts")

    static let item =
        #"{"id": 7, "name": "Lamp", "price": 12.5, "status": "available", "created_at": "2026-11-25T10:00:00Z", "tags": ["home"]}"#

    @Test("validate: one body, JSONL, an OpenAPI operation; exit 1 on a violation, 66 on a missing file")
    func validate() throws {
        let shop = Self.fixtures.appendingPathComponent("shop.yaml").path
        let body = try CLI.temporaryFile(#"{"petType": "dog", "name": "Rex", "bark": "woof"}"#)
        defer { CLI.remove(body) }
        let broken = try CLI.run([
            "contract", "validate", "--openapi", shop, "--operation", "getPet", "--status", "200", body,
        ])
        #expect(broken.status == 1)
        #expect(broken.output.contains("/bark: enum: expected one of [\"soft\", \"loud\"], found \"woof\""))
        // The same operation by its method and path, as the document writes them.
        let byPath = try CLI.run([
            "contract", "validate", "--openapi", shop, "--operation", "get /pets/{petId}", "--status", "200", body,
        ])
        #expect(byPath.status == 1)
        #expect(byPath.output == broken.output)
        let lines = try CLI.temporaryFile("\(Self.item)\n\(Self.item.replacingOccurrences(of: "12.5", with: "null"))\n")
        defer { CLI.remove(lines) }
        let jsonl = try CLI.run([
            "contract", "validate", "--openapi", shop, "--operation", "getItem", "--status", "200", "--jsonl", "--json",
            lines,
        ])
        #expect(jsonl.status == 1)
        let verdicts = try #require(try JSONSerialization.jsonObject(with: Data(jsonl.output.utf8)) as? [[String: Any]])
        #expect(verdicts.map { $0["valid"] as? Bool } == [true, false])
        // Without --status, the operation's request body: the readOnly `id` is not required in
        // it (OpenAPI 3.0: nor may it be sent), the writeOnly `secret` is.
        let created = Self.item.replacingOccurrences(of: "\"id\": 7, ", with: "\"secret\": \"s\", ")
        let requests = try CLI.temporaryFile("\(created)\n\(Self.item)\n")
        defer { CLI.remove(requests) }
        let checked = try CLI.run([
            "contract", "validate", "--openapi", shop, "--operation", "createItem", "--jsonl", requests,
        ])
        #expect(checked.status == 1)
        #expect(checked.output.contains("line 1: valid"), "\(checked.output)")
        #expect(checked.output.contains("required: expected property \"secret\""), "\(checked.output)")
        #expect(!checked.output.contains("required: expected property \"id\""), "\(checked.output)")
        #expect(
            checked.output.contains("readOnly: expected no property \"id\" in a request (readOnly), found present"),
            "\(checked.output)")
        let missing = try CLI.run(["contract", "validate", "--schema", "/nonexistent/schema.json", body])
        #expect(missing.status == 66)
        // A schema that is there but does not load (a remote $ref not mapped) is a failure, 1, as
        // `contract lint` says of it.
        let unloadable = try CLI.temporaryFile(#"{"$ref": "https://schemas.example/missing.json"}"#)
        defer { CLI.remove(unloadable) }
        let notLoaded = try CLI.run(["contract", "validate", "--schema", unloadable, body])
        #expect(notLoaded.status == 1 && notLoaded.output.contains("schemas.example"), "\(notLoaded.output)")
        // Naming what the document does not have is a usage error (64), not a verdict (1).
        let unknown = try CLI.run([
            "contract", "validate", "--openapi", shop, "--operation", "getNothing", "--status", "200", body,
        ])
        #expect(unknown.status == 64 && unknown.output.contains("no operation getNothing"), "\(unknown.output)")
        let undocumented = try CLI.run([
            "contract", "validate", "--openapi", shop, "--operation", "getPet", "--status", "418", body,
        ])
        #expect(
            undocumented.status == 64 && undocumented.output.contains("getPet has no JSON response schema for 418"),
            "\(undocumented.output)")
    }

    @Test("validate: --media-type picks among several JSON types, application/json by default; --status takes keys")
    func validateMediaTypesAndKeys() throws {
        let document = try CLI.temporaryFile(
            """
            openapi: 3.1.0
            info: {title: t, version: '1'}
            paths:
              /thing:
                get:
                  operationId: getThing
                  responses:
                    '200':
                      description: ok
                      content:
                        application/vnd.example.v2+json: {schema: {type: object, required: [v2]}}
                        application/json: {schema: {type: object, required: [name]}}
                    4XX:
                      description: problem
                      content: {application/problem+json: {schema: {type: object, required: [title]}}}
            """)
        defer { CLI.remove(document) }
        let body = try CLI.temporaryFile(#"{"name": "n"}"#)
        defer { CLI.remove(body) }
        func validate(_ extra: [String]) throws -> Int32 {
            try CLI.run(["contract", "validate", "--openapi", document, "--operation", "getThing"] + extra + [body])
                .status
        }
        #expect(try validate(["--status", "200"]) == 0)
        #expect(try validate(["--status", "200", "--media-type", "application/vnd.example.v2+json"]) == 1)
        #expect(try validate(["--status", "4XX"]) == 1)
        #expect(try validate(["--status", "404"]) == 1)
        #expect(try validate(["--status", "600"]) == 64)
        #expect(try validate(["--status", "2XY"]) == 64)
        // text/plain is not validated: asking for it names what cannot be done (a usage error).
        #expect(try validate(["--status", "200", "--media-type", "text/plain"]) == 64)
    }

    @Test("lint: warnings and what cannot be checked, file:line #pointer; exit 1 when the document does not load")
    func lint() throws {
        let shop = Self.fixtures.appendingPathComponent("shop.yaml").path
        let linted = try CLI.run(["contract", "lint", shop])
        #expect(linted.status == 0)
        #expect(
            linted.output.contains("warning: \(shop):6 #/info/description: description should be a string (ignored)"))
        #expect(
            linted.output.contains(
                "unchecked: \(shop):98 #/paths/~1pets~1{petId}/get/responses/200: getPet (GET /pets/{petId}) 200 text/plain: only JSON bodies are validated"
            ), "\(linted.output)")
        #expect(linted.output.hasSuffix("\(shop): 6 operations, 5 with response schemas, 2 warnings, 1 unchecked\n"))
        let json = try CLI.run(["contract", "lint", "--json", shop])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(report["operations"] as? Int == 6)
        let findings = try #require(report["findings"] as? [[String: Any]])
        #expect(findings.map { $0["severity"] as? String } == ["warning", "warning", "unchecked"])
        #expect(findings.first?["line"] as? Int == 6)
        // A description whose operations are files of their own, named by $ref: clean
        let catalog = try CLI.run([
            "contract", "lint", Self.fixtures.appendingPathComponent("catalog/openapi.yaml").path,
        ])
        #expect(catalog.status == 0)
        #expect(catalog.output.hasSuffix(": 5 operations, 5 with response schemas, 0 warnings, 0 unchecked\n"))
        let cycle = try CLI.run(["contract", "lint", Self.fixtures.appendingPathComponent("cycle.yaml").path])
        #expect(cycle.status == 1)
        #expect(cycle.output.contains("error: ") && cycle.output.contains("a $ref cycle"), "\(cycle.output)")
        // --examples: the document's own examples against its schemas; one that breaks is exit 1.
        let document = try CLI.temporaryFile(
            """
            openapi: 3.1.0
            info: {title: t, version: '1'}
            paths:
              /a:
                get:
                  responses:
                    '200':
                      description: x
                      content:
                        application/json:
                          schema: {type: object, properties: {n: {type: integer}}}
                          examples:
                            fine: {value: {n: 1}}
                            wrong: {value: {n: one}}
            """)
        defer { CLI.remove(document) }
        #expect(try CLI.run(["contract", "lint", document]).status == 0)
        let checked = try CLI.run(["contract", "lint", "--examples", document])
        #expect(checked.status == 1)
        #expect(
            checked.output.contains(
                #"example: \#(document):14 #/paths/~1a/get/responses/200/content/application~1json/examples/wrong/value: (GET /a) 200 application/json example "wrong" breaks its schema: /n: type: expected integer, found string"#
            ), "\(checked.output)")
        #expect(checked.output.hasSuffix("0 unchecked, 1 example breaking its schema\n"), "\(checked.output)")
    }

    @Test("lint --schema: a JSON Schema loads, or every error is said (each unmapped remote $ref)")
    func lintSchema() throws {
        let good = try CLI.temporaryFile(
            ##"{"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}}"##)
        defer { CLI.remove(good) }
        let loaded = try CLI.run(["contract", "lint", "--schema", good])
        #expect(loaded.status == 0 && loaded.output.hasSuffix("\(good): JSON Schema, loads\n"), "\(loaded.output)")
        let remote = try CLI.temporaryFile(
            #"{"properties": {"a": {"$ref": "https://x.example/a.json"}, "b": {"$ref": "https://x.example/b.json"}}}"#)
        defer { CLI.remove(remote) }
        let refused = try CLI.run(["contract", "lint", "--schema", remote])
        #expect(refused.status == 1)
        #expect(refused.output.components(separatedBy: "error: ").count == 3, "both refs: \(refused.output)")
        #expect(refused.output.contains("https://x.example/b.json"))
    }

    @Test("coverage and report: from the running proxy, from its recording and from its cache")
    func coverageAndReport() throws {
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: Self.fixtures, to: directory.appendingPathComponent("contracts"))
        let origin = try OriginServer { request in
            let body: String =
                switch request.target {
                case let target where target.hasSuffix("/items/7"): Self.item
                case let target where target.hasSuffix("/items/9"):
                    Self.item.replacingOccurrences(of: "12.5", with: "null")
                default: "{\"items\": [\(Self.item)], \"total\": 1}"
                }
            return .respond(
                status: 200,
                headers: [
                    ("Content-Type", "application/json"), ("Cache-Control", "max-age=600"), ("X-Rate-Limit", "5"),
                ],
                body: Array(body.utf8))
        }
        defer { origin.stop() }
        let probe = try TestListener()
        let adminPort = probe.port
        probe.closeUnused()
        let config = directory.appendingPathComponent("sluice.yaml").path
        try """
        cache: { path: cache.sqlite }
        admin: { listen: "127.0.0.1:\(adminPort)" }
        log: { access: false }
        rules:
          - name: shop
            match: { host: "127.0.0.1", path: "/v2/**" }
            contract: { openapi: contracts/shop.yaml, on_violation: report }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let recording = directory.appendingPathComponent("run.sqlite").path
        let (process, pipe, port) = try CLI.serve(
            ["--config", config, "--record", recording, "--admin-listen", "127.0.0.1:\(adminPort)"],
            currentDirectory: directory)
        pipe.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        let client = try CLI.connect(port)
        for path in ["/v2/items/7", "/v2/items", "/v2/items/9"] {
            #expect(try client.request(RawClient.get(origin.url(path))).status == 200)
        }

        // From the running proxy
        let live = try CLI.run(["contract", "coverage", "--config", config])
        let seenItem = "  SEEN    200  getItem (GET /items/{itemId})  exchanges 2, validated 2, broken 1"
        #expect(live.status == 0, "\(live.output)")
        #expect(live.output.contains(seenItem), "\(live.output)")
        #expect(live.output.contains("  SEEN    200  listItems (GET /items)  exchanges 1, validated 1, broken 0"))
        #expect(live.output.contains("  NEVER   201, default  createItem (POST /items)"), "\(live.output)")
        #expect(live.output.hasSuffix("3 exchanges checked, 1 broke a contract\n"))
        let json = try CLI.run(["contract", "coverage", "--config", config, "--json", "--rule", "shop"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["checked"] as? Int == 3 && object["broken"] as? Int == 1, "\(json.output)")
        // A configuration the proxy at that address does not run: refused, not its coverage read
        // as this one's. `--admin` finds a proxy whose address the configuration does not name.
        let other = directory.appendingPathComponent("other.yaml").path
        try """
        admin: { listen: "127.0.0.1:\(adminPort)" }
        rules:
          - name: cafe
            match: { host: "127.0.0.1", path: "/v2/**" }
            contract: { openapi: contracts/shop.yaml }
        """.write(toFile: other, atomically: true, encoding: .utf8)
        let wrong = try CLI.run(["contract", "coverage", "--config", other, "--json"])
        #expect(wrong.status != 0, "\(wrong.output)")
        #expect(wrong.output.contains("checks rule shop (/"), "\(wrong.output)")
        #expect(wrong.output.contains("shop.yaml), not rule cafe (/"), "\(wrong.output)")
        let unknownRule = try CLI.run(["contract", "coverage", "--config", config, "--rule", "nope"])
        #expect(unknownRule.status != 0 && unknownRule.output.contains("no rule nope with a contract"))
        let elsewhere = directory.appendingPathComponent("elsewhere.yaml").path
        try """
        admin: { listen: "127.0.0.1:1" }
        rules:
          - name: shop
            match: { host: "127.0.0.1", path: "/v2/**" }
            contract: { openapi: contracts/shop.yaml, on_violation: report }
        """.write(toFile: elsewhere, atomically: true, encoding: .utf8)
        let named = try CLI.run(["contract", "coverage", "--config", elsewhere, "--admin", "127.0.0.1:\(adminPort)"])
        #expect(named.status == 0 && named.output.contains(seenItem), "\(named.output)")
        process.terminate()
        process.waitUntilExit()

        // From the recording and from the cache, after the fact
        let recorded = try CLI.run(["contract", "coverage", "--config", config, "--recording", recording])
        #expect(recorded.output.contains(seenItem), "\(recorded.output)")
        let junit = directory.appendingPathComponent("shop.xml").path
        let report = try CLI.run([
            "contract", "report", "--config", config, "--recording", recording, "--output", junit, "--fail-on",
            "violations",
        ])
        #expect(report.status == 1, "\(report.output)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains(#"<testcase classname="shop" name="getItem (GET /items/{itemId}) 200">"#), "\(xml)")
        #expect(xml.contains(#"<failure type="contract-violation" message="1 violation: /price: type"#), "\(xml)")
        let stored = try CLI.run(["contract", "report", "--config", config, "--cache", "--format", "markdown"])
        #expect(stored.status == 0)
        #expect(
            stored.output.contains("| shop | getItem (GET /items/{itemId}) | 200 | 2 | 2 | **1** |"), "\(stored.output)"
        )
    }

    @Test("check finds the stored responses a changed document breaks; infer writes a schema per operation")
    func checkAndInfer() throws {
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The document beside the configuration (relative paths start at the config file).
        let contracts = directory.appendingPathComponent("contracts")
        try FileManager.default.copyItem(at: Self.fixtures, to: contracts)
        let origin = try OriginServer { request in
            let body = request.target.hasSuffix("/items/7") ? Self.item : "{\"items\": [\(Self.item)], \"total\": 1}"
            return .respond(
                status: 200,
                headers: [
                    ("Content-Type", "application/json"), ("Cache-Control", "max-age=600"), ("X-Rate-Limit", "5"),
                ],
                body: Array(body.utf8))
        }
        defer { origin.stop() }
        let config = directory.appendingPathComponent("sluice.yaml").path
        try """
        cache: { path: cache.sqlite }
        log: { access: false }
        rules:
          - name: shop
            match: { host: "127.0.0.1", path: "/v2/**" }
            contract: { openapi: contracts/shop.yaml, on_violation: report }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let checked = try CLI.run(["check-config", "--config", config])
        #expect(checked.status == 0)
        let shop = contracts.appendingPathComponent("shop.yaml").path
        #expect(
            checked.output.contains(
                "contract: rule shop: contract \(shop) (OpenAPI 3.0.3): 6 operations, 5 with response schemas, 2 warnings; see `sluice contract lint \(shop)`"
            ), "\(checked.output)")
        #expect(checked.output.contains("  warning: \(contracts.path)/shop.yaml:6 #/info/description:"))
        let (process, pipe, port) = try CLI.serve(["--config", config])
        pipe.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        let client = try CLI.connect(port)
        #expect(try client.request(RawClient.get(origin.url("/v2/items/7"))).status == 200)
        #expect(try client.request(RawClient.get(origin.url("/v2/items"))).status == 200)
        process.terminate()
        process.waitUntilExit()

        let shown = try CLI.run(["cache", "show", "--config", config, origin.url("/v2/items/7")])
        #expect(shown.output.contains("contract   passed"), "\(shown.output)")
        let clean = try CLI.run(["contract", "check", "--config", config])
        #expect(clean.status == 0, "\(clean.output)")
        #expect(clean.output.contains("2 stored responses checked, 0 break the contract"))
        // Today's document says a name has at most 3 characters: both stored responses break it.
        let item = contracts.appendingPathComponent("schemas/item.yaml").path
        let text = try String(contentsOfFile: item, encoding: .utf8)
        try text.replacingOccurrences(of: "maxLength: 80", with: "maxLength: 3").write(
            toFile: item, atomically: true, encoding: .utf8)
        let broken = try CLI.run(["contract", "check", "--config", config, "--url", "**/items/*"])
        #expect(broken.status == 1)
        #expect(broken.output.contains("BROKEN  200  \(origin.url("/v2/items/7"))"))
        #expect(broken.output.contains("/name: maxLength"))
        #expect(broken.output.contains("1 stored response checked, 1 breaks the contract"))

        let out = directory.appendingPathComponent("inferred").path
        let inferred = try CLI.run(["contract", "infer", "--config", config, "--host", "127.0.0.1", "--out", out])
        #expect(inferred.status == 0, "\(inferred.output)")
        let one = try #require(FileManager.default.contents(atPath: out + "/GET-v2-items-id.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: one) as? [String: Any])
        #expect(schema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        #expect(schema["type"] as? String == "object")
        #expect((schema["required"] as? [String])?.contains("price") == true)
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect((properties["price"] as? [String: Any])?["type"] as? String == "number")
        #expect((properties["tags"] as? [String: Any])?["type"] as? String == "array")
        // host:port names one origin, as `cache list` prints it; another port has nothing stored.
        let own = try CLI.run([
            "contract", "infer", "--config", config, "--host", "127.0.0.1:\(origin.port)", "--out", out + "2",
        ])
        #expect(own.status == 0, "\(own.output)")
        let other = try CLI.run(["contract", "infer", "--config", config, "--host", "127.0.0.1:1", "--out", out + "3"])
        #expect(other.status != 0)
    }

    @Test("SIGHUP reloads a contract: a broken document keeps the one in force and says where; a fixed one applies")
    func reloadOnHangup() throws {
        let directory = try CLI.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let schema = directory.appendingPathComponent("item.schema.json").path
        try #"{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}"#
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("sluice.yaml").path
        try """
        log: { access: false }
        rules:
          - name: items
            match: { path: "/items/**" }
            contract: { schema: item.schema.json, on_violation: enforce }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let origin = try OriginServer { _ in
            .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"id": "7"}"#.utf8))
        }
        defer { origin.stop() }
        let (process, pipe, port) = try CLI.serve(["--config", config])
        defer { if process.isRunning { process.terminate() } }
        let output = OutputCollector(pipe)
        let client = try CLI.connect(port)
        #expect(try client.request(RawClient.get(origin.url("/items/1"))).status == 502)
        // A document that does not parse: the contract in force stays.
        try #"{"type": "object", "properties": {"id": {"type": "string"}}"#.write(
            toFile: schema, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(eventually { output.text.contains("reload failed") }, "the reload was not tried")
        #expect(try client.request(RawClient.get(origin.url("/items/1"))).status == 502)
        // A fixed document in which "7" is right: it applies.
        try #"{"type": "object", "properties": {"id": {"type": "string"}}}"#.write(
            toFile: schema, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(eventually { output.text.contains("reloaded 1 rule(s)") }, "the reload was not done")
        #expect(try client.request(RawClient.get(origin.url("/items/1"))).status == 200)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        _ = eventually { output.text.contains("sluice stopped") }
        let log = output.text
        #expect(log.contains("reload failed, keeping the current rules"), "\(log)")
        #expect(log.contains("item.schema.json"), "\(log)")
        #expect(log.contains("reloaded 1 rule(s)"), "\(log)")
    }
}
