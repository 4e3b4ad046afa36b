import Foundation
import Sluice
import Testing

@Suite("ConfigLoader")
struct ConfigLoaderTests {
    /// The repository root (tests run from anywhere).
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    @Test("conf/sluice.yaml is the built-in defaults but for its files, kept in the repository's var/")
    func shippedFileMatchesDefaults() throws {
        let file = Self.root.appendingPathComponent("conf/sluice.yaml")
        let text = try String(contentsOf: file, encoding: .utf8)
        var shipped = try ConfigLoader.load(file: file.path)
        let repositoryVar = Self.root.appendingPathComponent("var").standardizedFileURL.path
        #expect(shipped.cache.path == repositoryVar + "/sluice.sqlite")
        #expect(shipped.tls.caCert == repositoryVar + "/sluice-ca.pem")
        #expect(shipped.tls.caKey == repositoryVar + "/sluice-ca.key")
        let defaults = Configuration()
        (shipped.cache.path, shipped.tls.caCert, shipped.tls.caKey) =
            (defaults.cache.path, defaults.tls.caCert, defaults.tls.caKey)
        #expect(shipped == defaults)
        for key in ConfigLoader.keys {
            let leaf = String(key.path.split(separator: ".").last!)
            #expect(text.contains(leaf + ":"), "conf/sluice.yaml does not mention \(key.path)")
        }
    }

    @Test("Values of every type are read: sizes, durations, lists, CIDRs, enums")
    func values() throws {
        let config = try ConfigLoader.load(
            yaml: """
                listen: "127.0.0.1:9090"
                allow_clients: [10.0.0.0/8, "fd00::/8"]
                connect_ports: [443, 8443]
                limits: { max_connections: 10, max_request_body: 2MiB, max_header_bytes: 32K }
                timeouts:
                  client_header: 1.5
                  upstream_response: 250ms
                  tunnel_idle: 2m
                redirects: { policy: follow, limit: 3 }
                log: { access: false, level: debug }
                """)
        #expect(config.listen == "127.0.0.1:9090")
        #expect(config.allowClients.count == 2)
        #expect(config.connectPorts == [443, 8443])
        #expect(config.limits.maxConnections == 10)
        #expect(config.limits.maxRequestBody == 2 * 1024 * 1024)
        #expect(config.limits.maxHeaderBytes == 32 * 1024)
        #expect(config.timeouts.clientHeader == 1500)
        #expect(config.timeouts.upstreamResponse == 250)
        #expect(config.timeouts.tunnelIdle == 120_000)
        #expect(config.redirects.policy == .follow)
        #expect(config.redirects.limit == 3)
        #expect(!config.log.access)
    }

    @Test(
        "Empty sections in any of YAML's null spellings mean defaults; a quoted null is text",
        arguments: ["limits:\n", "limits: ~\n", "limits: null\n", "limits: NULL\n", "defaults: Null\n"])
    func nullSections(yaml: String) throws {
        #expect(try ConfigLoader.load(yaml: yaml) == Configuration())
    }

    @Test("Scalars keep their text: yes/on are booleans only where a boolean is expected")
    func untypedScalars() throws {
        let config = try ConfigLoader.load(yaml: "log: { access: off, level: \"debug\" }\nlisten: \"127.0.0.1:8081\"\n")
        #expect(!config.log.access)
        #expect(config.listen == "127.0.0.1:8081")
        #expect(throws: ConfigError.self) { try ConfigLoader.load(yaml: "limits: \"null\"\n") }
    }

    @Test(
        "Errors name the key and the line",
        arguments: [
            ("listen: 127.0.0.1:8080\nlimits:\n  max_conections: 5\n", "limits.max_conections", 3, "unknown key"),
            ("redirects:\n  policy: sometimes\n", "redirects.policy", 2, "pass, follow or refuse"),
            ("\n\nallow_clients: [10.0.0.0/33]\n", "allow_clients", 3, "CIDR"),
            ("limits:\n  max_request_body: lots\n", "limits.max_request_body", 2, "size"),
            ("timeouts:\n  client_idle: soon\n", "timeouts.client_idle", 2, "duration"),
            ("connect_ports: [0]\n", "connect_ports", 1, "integer"),
            ("listen: example.com:80\n", "listen", 1, "IP address"),
            ("log:\n  access: maybe\n", "log.access", 2, "true or false"),
            ("upstream: 5\n", "upstream", 1, "mapping"),
            ("listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n", "listen", 2, "duplicate"),
            ("rules:\n  - name: a\n    matchs: {}\n", "rules[0].matchs", 3, "did you mean match"),
            ("rules:\n  - name: a\n    match:\n      path: /v1/a**\n", "rules[0].match.path", 4, "bad glob"),
            ("rules:\n  - match: { host: \"a b\" }\n", "rules[0].match.host", 2, "bad glob"),
            (
                "rules:\n  - name: a\n  - name: b\n    accept:\n      status: [200, \"300-200\"]\n",
                "rules[1].accept.status", 5, "bad status range"
            ),
            (
                "rules:\n  - accept:\n      content_types:\n        - application/json\n        - \"text\"\n",
                "rules[0].accept.content_types", 5, "malformed MIME type"
            ),
            ("rules:\n  - accept: { on_reject: ignore }\n", "rules[0].accept.on_reject", 2, "enforce or report"),
            ("rules:\n  - strip_json_nulls: sometimes\n", "rules[0].strip_json_nulls", 2, "true, false or all"),
            ("rules:\n  - name: x\n  - name: x\n", "rules[1].name", 3, "duplicate rule name"),
            ("defaults:\n  redirects: follow\n", "defaults.redirects", 2, "redirects.policy"),
            ("defaults:\n  accept:\n    statuses: [200]\n", "defaults.accept.statuses", 3, "did you mean status"),
            ("rules: {}\n", "rules", 1, "list"),
        ])
    func errors(yaml: String, key: String, line: Int, fragment: String) {
        do {
            _ = try ConfigLoader.load(yaml: yaml, file: "test.yaml")
            Issue.record("accepted \(yaml)")
        } catch {
            #expect(error.key == key)
            #expect(error.line == line)
            #expect(error.description.contains(fragment), "\(error)")
            #expect(error.description.hasPrefix("test.yaml:\(line): \(key)"))
        }
    }

    @Test("Rules and defaults are read with every field")
    func rules() throws {
        let config = try ConfigLoader.load(
            yaml: """
                defaults:
                  accept: { status: ["2xx", 304] }
                  strip_json_nulls: all
                rules:
                  - name: api
                    match: { host: "*.example.com", path: "/v1/**", methods: [get, POST] }
                    accept:
                      status: ["200-299", 304]
                      content_types: [application/json, "application/*+json"]
                      on_reject: report
                    strip_json_nulls: true
                    redirects: follow
                  - match: { path: "/x" }
                """)
        #expect(config.defaults.accept?.status.spelled == ["2xx", "304"])
        #expect(config.defaults.stripJSONNulls == .all)
        let api = config.rules[0]
        #expect(api.name == "api")
        #expect(api.match.methods == ["GET", "POST"])
        #expect(api.match.host?.text == "*.example.com")
        #expect(api.accept?.contentTypes?.map(\.description) == ["application/json", "application/*+json"])
        #expect(api.accept?.onReject == .report)
        #expect(api.stripJSONNulls == .members)
        #expect(api.redirects == .follow)
        #expect(config.rules[1].name == "rule 2")
        #expect(config.rules[1].accept == nil)
        #expect(config.ruleBook.rule(method: "GET", host: "a.example.com", path: "/v1/z").name == "api")
    }

    @Test("Invalid YAML is reported, not crashed on; an empty file means defaults")
    func syntax() throws {
        #expect(throws: ConfigError.self) { _ = try ConfigLoader.load(yaml: "limits: [unclosed") }
        #expect(try ConfigLoader.load(yaml: "") == Configuration())
        #expect(try ConfigLoader.load(yaml: "# only a comment\n") == Configuration())
    }

    @Test("The reference lists every key with its default")
    func reference() {
        let reference = ConfigLoader.referenceMarkdown
        for key in ConfigLoader.keys { #expect(reference.contains("`\(key.path)`")) }
    }
}
