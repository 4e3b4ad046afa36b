import Foundation
import SluiceTestKit
import TLS
import Testing

@testable import Sluice

/// HTTPS interception end to end: a real HTTPS origin (Python's `ssl`) with a certificate from a
/// test CA made at test time, Sluice with its own local CA in a temporary folder, and curl as the
/// client (`-x`, `--cacert`).
@Suite("HTTPS interception")
struct InterceptionTests {
    /// A temporary folder with Sluice's CA paths and the origins' test CA.
    final class Setup: @unchecked Sendable {
        let directory: URL
        let originCA: CertificateAuthority
        let originCAPath: String
        var caCert: String { directory.appendingPathComponent("sluice-ca.pem").path }
        var caKey: String { directory.appendingPathComponent("sluice-ca.key").path }

        init() throws {
            directory = TestScratch.root.appendingPathComponent("intercept-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            originCA = try CertificateAuthority.create(
                commonName: "Test origin CA", organization: "Tests", validDays: 30)
            originCAPath = directory.appendingPathComponent("origin-ca.pem").path
            try originCA.certificatePEM.write(toFile: originCAPath, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// A configuration that intercepts `localhost` and trusts the test CA for it.
        func configuration(extraRule: String = "", tls: String = "", connectPort: UInt16) throws -> Configuration {
            try ConfigLoader.load(
                yaml: """
                    connect_ports: [\(connectPort)]
                    tls:
                      intercept: ["localhost", "127.0.0.1"]
                      ca_cert: \(caCert)
                      ca_key: \(caKey)
                    \(tls)
                    rules:
                    \(extraRule)
                      - name: api
                        match: { host: "localhost", path: "/json" }
                        strip_json_nulls: true
                        tls: { ca_file: \(originCAPath) }
                      - name: site
                        match: { host: "localhost" }
                        accept: { status: ["200-299"] }
                        tls: { ca_file: \(originCAPath) }
                    defaults:
                      tls: { ca_file: \(originCAPath) }
                    """)
        }
    }

    /// What curl got.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
        var exitCode: Int32
    }

    /// Runs curl through the proxy; `cacert` is the CA the client trusts (Sluice's by default).
    static func curl(_ url: String, proxy: UInt16, cacert: String, extra: [String] = []) throws -> Response {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["curl", "-s", "-D", "-", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy)", "--cacert", cacert]
            + extra + [url]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        // The CONNECT's own 200 comes first, then the response inside the tunnel.
        var blocks = text.components(separatedBy: "\r\n\r\n")
        while blocks.count > 1, blocks[0].hasPrefix("HTTP/1.1 200 Connection") { blocks.removeFirst() }
        let head = blocks.first ?? ""
        var headers: [String: String] = [:]
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Response(
            status: status, headers: headers, body: blocks.dropFirst().joined(separator: "\r\n\r\n"),
            exitCode: process.terminationStatus)
    }

    @Test(
        "An intercepted https response is held to its contract: enforced, it becomes a 502 contract-violation problem")
    func interceptedContract() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let schema = setup.directory.appendingPathComponent("json.schema.json").path
        try
            #"{"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}"#
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let configuration = try setup.configuration(
            extraRule: """
                  - name: json-contract
                    match: { host: "localhost", path: "/json" }
                    contract: { schema: \(schema), on_violation: enforce }
                    tls: { ca_file: \(setup.originCAPath) }
                """, connectPort: origin.port
        ).loadingContracts()
        let proxy = try ProxyHarness(configuration: configuration)
        let response = try Self.curl(origin.url("/json"), proxy: proxy.port, cacert: setup.caCert)
        #expect(response.exitCode == 0)
        #expect(response.status == 502)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.body.contains("contract-violation"))
        #expect(response.body.contains(#""pointer":"/b""#))
        #expect(response.body.contains(#""found":"null""#))
    }

    @Test("An intercepted https URL is forwarded, stripped, validated and cached like an http one")
    func interceptedExchanges() throws {
        // Given an HTTPS origin and Sluice intercepting its host
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.cache.path = setup.directory.appendingPathComponent("cache.sqlite").path
        var proxy: ProxyHarness? = try ProxyHarness(configuration: configuration)
        let port = proxy!.port
        // Then the local CA was created, its key private to its owner
        let mode = try FileManager.default.attributesOfItem(atPath: setup.caKey)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o077 == 0 } == true)

        // When a client that trusts Sluice's CA asks for JSON twice
        let first = try Self.curl(origin.url("/json"), proxy: port, cacert: setup.caCert)
        let second = try Self.curl(origin.url("/json"), proxy: port, cacert: setup.caCert)
        // Then the nulls are gone, the first was stored and the second came from the cache
        #expect(first.exitCode == 0 && first.status == 200)
        #expect(first.body == #"{"a":1,"c":[null,{}]}"#)
        #expect(first.headers["cache-status"]?.hasSuffix("stored") == true)
        #expect(second.body == first.body)
        #expect(second.headers["cache-status"]?.contains("hit") == true)
        #expect(origin.requests == 1)

        // And a large cached body (kept in memory as a file) reaches the TLS client whole on a hit
        let big = origin.url("/big?n=200000&cc=max-age%3D60")
        let expected = String(decoding: HTTPSOrigin.bigBody(count: 200_000), as: UTF8.self)
        #expect(try Self.curl(big, proxy: port, cacert: setup.caCert).body == expected)
        for _ in 0..<3 {
            let hit = try Self.curl(big, proxy: port, cacert: setup.caCert)
            #expect(hit.body == expected && hit.headers["cache-status"]?.contains("hit") == true)
        }
        #expect(origin.requests == 2)

        // And a response the rule rejects is a problem, over https too
        let rejected = try Self.curl(origin.url("/html500"), proxy: port, cacert: setup.caCert)
        #expect(rejected.status == 502)
        #expect(rejected.body.contains("unacceptable-status"))
        let stats = proxy!.onLoop { server in (server.stats.tlsIntercepted, server.stats.cacheHits) }
        #expect(stats.0 == 7 && stats.1 == 4)

        // After a restart the https entry is still served from the file, and the inspector lists it
        proxy = nil
        proxy = try ProxyHarness(configuration: configuration)
        let again = try Self.curl(origin.url("/json"), proxy: proxy!.port, cacert: setup.caCert)
        #expect(again.headers["cache-status"]?.contains("hit") == true && again.body == first.body)
        #expect(origin.requests == 3)  // /json once, /big once, /html500 once
        var filter = CacheInspector.Filter()
        filter.url = "https://localhost:*"
        let listed = try CacheInspector(settings: configuration.cache).list(filter, now: Date().timeIntervalSince1970)
        #expect(Set(listed.map(\.url)) == [origin.url("/json"), big])
        // The same path over plain http is another key: a miss, never the https entry
        filter.url = "http://localhost:*"
        #expect(try CacheInspector(settings: configuration.cache).list(filter, now: 0).isEmpty)
    }

    @Test("A host listed in tls.intercept with its port is reached on that port without connect_ports")
    func listedPort() throws {
        // Given an HTTPS origin on a high port, listed as localhost:PORT, and connect_ports left alone
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let configuration = try ConfigLoader.load(
            yaml: """
                tls:
                  intercept: ["localhost:\(origin.port)"]
                  ca_cert: \(setup.caCert)
                  ca_key: \(setup.caKey)
                cache: { enabled: false }
                defaults:
                  tls: { ca_file: \(setup.originCAPath) }
                """)
        #expect(configuration.connectPorts == [80, 443])
        let proxy = try ProxyHarness(configuration: configuration)

        // When a client asks for it through the proxy
        let response = try Self.curl(origin.url("/json"), proxy: proxy.port, cacert: setup.caCert)

        // Then it was intercepted (Sluice's certificate, Sluice's Via) and answered
        #expect(response.exitCode == 0 && response.status == 200, "\(response)")
        #expect(response.headers["via"]?.contains("sluice") == true)
        #expect(proxy.onLoop { $0.stats.tlsIntercepted } == 1)
    }

    @Test("Origins whose certificates are not trusted or not pinned are problems that say why")
    func upstreamTrust() throws {
        let setup = try Setup()
        let stranger = try CertificateAuthority.create(
            commonName: "Unknown CA", organization: "Elsewhere", validDays: 30)
        let unknown = try HTTPSOrigin(authority: stranger)
        let expired = try HTTPSOrigin(authority: setup.originCA, validFrom: -10, validDays: 5)
        let wrongName = try HTTPSOrigin(authority: setup.originCA, name: "other.test")
        let selfSigned = try HTTPSOrigin(authority: setup.originCA, selfSigned: true)
        let good = try HTTPSOrigin(authority: setup.originCA)
        defer { [unknown, expired, wrongName, selfSigned, good].forEach { $0.stop() } }
        let pin = try Self.pin(ofCertificateAt: good.directory.appendingPathComponent("cert.pem").path)
        var configuration = try setup.configuration(
            extraRule: """
                  - name: pinned-right
                    match: { host: "localhost", path: "/nostore" }
                    tls: { ca_file: \(setup.originCAPath), pins: ["\(pin)"] }
                  - name: pinned-wrong
                    match: { host: "localhost", path: "/pinned-wrong" }
                    tls: { ca_file: \(setup.originCAPath), pins: ["sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] }
                """, connectPort: good.port)
        configuration.connectPorts = [unknown.port, expired.port, wrongName.port, selfSigned.port, good.port]
        let proxy = try ProxyHarness(configuration: configuration)

        for (origin, words) in [(unknown, "issuer is unknown"), (expired, "expired"), (wrongName, "not for this host")]
        {
            let response = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert)
            #expect(response.status == 502)
            #expect(response.body.contains("upstream-certificate-invalid"))
            #expect(response.body.contains(words), "\(response.body)")
        }
        let pinned = try Self.curl(good.url("/nostore"), proxy: proxy.port, cacert: setup.caCert)
        #expect(pinned.status == 200 && pinned.body == "fresh every time")
        let mismatch = try Self.curl(good.url("/pinned-wrong"), proxy: proxy.port, cacert: setup.caCert)
        #expect(mismatch.status == 502 && mismatch.body.contains("upstream-pin-mismatch"))
    }

    @Test(
        "An origin that wants a client certificate gets the rule's (tls.client_certificate); without one the problem says so",
        arguments: Configuration.UpstreamEngine.allCases)
    func clientCertificates(engine: Configuration.UpstreamEngine) throws {
        let setup = try Setup()
        // A client CA and a certificate it issues for client authentication, made by openssl.
        let folder = TestScratch.root.appendingPathComponent("client-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try "extendedKeyUsage=clientAuth\n".write(toFile: path("ext"), atomically: true, encoding: .utf8)
        for arguments in [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                path("ca.key"),
                "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=Test client CA",
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("client.key"),
                "-out", path("client.csr"), "-subj", "/CN=sluice-client",
            ],
            [
                "x509", "-req", "-in", path("client.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-out", path("client.pem"), "-days", "2", "-extfile", path("ext"),
            ],
        ] {
            let (status, output) = try runProgram("openssl", arguments)
            try #require(status == 0, "\(output)")
        }
        let origin = try HTTPSOrigin(authority: setup.originCA, clientCA: path("ca.pem"))
        defer { origin.stop() }
        var configuration = try setup.configuration(
            extraRule: """
                  - name: mutual
                    match: { host: "localhost", path: "/nostore" }
                    tls: { ca_file: \(setup.originCAPath), client_certificate: \(path("client.pem")), client_key: \(path("client.key")) }
                """, connectPort: origin.port)
        configuration.upstream.engine = engine
        let proxy = try ProxyHarness(configuration: configuration)
        let mutual = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert)
        #expect(mutual.status == 200 && mutual.body == "fresh every time", "\(engine): \(mutual.body)")
        // The other paths have no client certificate: a 502 that names what is missing.
        let without = try Self.curl(origin.url("/json"), proxy: proxy.port, cacert: setup.caCert)
        #expect(without.status == 502, "\(engine): \(without.body)")
        // (libcurl's words vary with what arrives first, the alert or the close: said by Sluice's own.)
        if proxy.upstreamEngine == .auto { #expect(without.body.contains("client certificate"), "\(without.body)") }
        // A key that is not the certificate's is refused at start, saying where.
        var wrong = configuration
        let index = try #require(wrong.rules.firstIndex { $0.name == "mutual" })
        wrong.rules[index].tls?.clientKey = path("ca.key")
        #expect(ProxyServer.clientCertificateRefusal(wrong)?.description.contains("rule mutual") == true)
    }

    /// Python's `ssl` through the proxy with `verify` (a CA file, or `False`): its exit status
    /// and what it printed (status, Cache-Status, body), or the error.
    static func python(_ url: String, proxy: UInt16, verify: String) throws -> (Int32, String) {
        let script = """
            import requests, sys
            verify = sys.argv[3] if sys.argv[3] != "no" else False
            try:
                r = requests.get(sys.argv[1], proxies={"https": sys.argv[2]}, verify=verify, timeout=10)
                print(r.status_code, r.headers.get("Cache-Status", "-"), r.text)
            except Exception as error:
                print("failed", type(error).__name__)
                sys.exit(3)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-W", "ignore", "-c", script, url, "http://127.0.0.1:\(proxy)", verify]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test(
        "A client that refuses twice within a minute gets blind tunnels keyed by its TLS fingerprint; another client on 127.0.0.1 stays intercepted; the admin API lists and clears the window"
    )
    func refusalThenPassthrough() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let admin = try proxy.startAdmin()
        // curl trusting only the origin's CA refuses Sluice's leaf: once is a client not set up yet.
        let first = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.originCAPath)
        #expect(first.exitCode != 0)
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.tlsCertificateRefusals } == 1 })
        #expect(proxy.logLines.all.contains { $0.contains("a second refusal within a minute makes its tunnels") })
        let second = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.originCAPath)
        #expect(second.exitCode != 0)
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.tlsPassthroughStarted } == 1 })
        let started = proxy.logLines.all.filter { $0.contains("refused twice within a minute") }
        #expect(started.count == 1)
        #expect(started.first?.contains("sluice tls passthrough clear --host localhost") == true)
        // Now that client (curl's fingerprint) talks to the origin itself: Sluice sees nothing.
        let tunnelled = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.originCAPath)
        #expect(tunnelled.exitCode == 0 && tunnelled.status == 200 && tunnelled.body == "fresh every time")
        #expect(tunnelled.headers["cache-status"] == nil, "a blind tunnel: Sluice saw nothing")
        #expect(proxy.onLoop { $0.stats.tlsPassthroughTunnels } == 1)
        // Python's TLS (another fingerprint) on the same address, trusting Sluice's CA, is still intercepted.
        let (status, output) = try Self.python(origin.url("/json"), proxy: proxy.port, verify: setup.caCert)
        #expect(status == 0 && output.hasPrefix("200 Sluice; fwd=uri-miss"), "\(output)")
        // The window is listed with curl's fingerprint, then cleared.
        let listed = try AdminTests.request(admin, "GET", "/tls/passthrough")
        let windows = (try? JSONSerialization.jsonObject(with: Data(listed.body))) as? [[String: Any]] ?? []
        #expect(windows.count == 1)
        #expect(windows.first?["host"] as? String == "localhost")
        #expect(windows.first?["client"] as? String == "127.0.0.1")
        let fingerprint = windows.first?["fingerprint"] as? String ?? ""
        #expect(fingerprint.hasPrefix("t13d") && fingerprint.split(separator: "_").count == 3, "\(fingerprint)")
        #expect(proxy.logLines.all.contains { $0.contains("TLS fingerprint \(fingerprint)") })
        let stats = AdminTests.object(try AdminTests.request(admin, "GET", "/stats"))
        #expect(((stats["tls"] as? [String: Any])?["passthrough"] as? [Any])?.count == 1)
        let cleared = AdminTests.object(try AdminTests.request(admin, "DELETE", "/tls/passthrough?host=localhost"))
        #expect(cleared["cleared"] as? Int == 1)
        // Intercepted again: curl refuses again (a first refusal again, not blind).
        let again = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.originCAPath)
        #expect(again.exitCode != 0)
        #expect(proxy.onLoop { $0.stats.tlsPassthroughTunnels } == 1)
    }

    @Test("A client that completed a handshake for the host is not pinning: its refusals never make tunnels blind")
    func completedHandshakeIsNotPinning() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        // curl trusting Sluice's CA completes a handshake (a load generator, a browser)…
        let trusted = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert)
        #expect(trusted.status == 200 && trusted.headers["cache-status"] != nil)
        // …then the same TLS client cuts handshakes short three times (same fingerprint).
        for _ in 0..<3 {
            let cut = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.originCAPath)
            #expect(cut.exitCode != 0)
        }
        #expect(proxy.waitUntil { proxy.onLoop { $0.stats.tlsCertificateRefusals } == 3 })
        #expect(proxy.onLoop { $0.stats.tlsPassthroughStarted } == 0)
        #expect(proxy.logLines.all.contains { $0.contains("not pinning") })
        let still = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert)
        #expect(still.status == 200 && still.headers["cache-status"] != nil, "still intercepted")
    }

    @Test("An IP literal gets an IP SAN (no SNI), and Python requests works through the proxy too")
    func ipLiteralAndRequests() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA, name: "127.0.0.1")
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.rules = []
        let proxy = try ProxyHarness(configuration: configuration)
        // curl sends no SNI for an IP literal: the leaf is for the CONNECT host, as an IP SAN.
        let literal = try Self.curl(origin.url("/nostore", host: "127.0.0.1"), proxy: proxy.port, cacert: setup.caCert)
        #expect(literal.exitCode == 0 && literal.status == 200 && literal.body == "fresh every time")
        // Python requests, asked to strip nulls by header.
        let script = """
            import requests, sys
            r = requests.get(sys.argv[1], proxies={"https": sys.argv[2]}, verify=sys.argv[3],
                             headers={"Sluice-Strip-Nulls": "1"}, timeout=10)
            print(r.status_code, r.headers.get("Cache-Status", "-"), r.text)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", script, origin.url("/json", host: "127.0.0.1"), "http://127.0.0.1:\(proxy.port)",
            setup.caCert,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(output.hasPrefix("200 Sluice; fwd=uri-miss; stored "), "\(output)")
        #expect(output.hasSuffix(#"{"a":1,"c":[null,{}]}"# + "\n"), "\(output)")
    }

    @Test("200 handshakes cut at random points leave no connection behind")
    func cutHandshakes() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.tls.passthroughAfterFailure = 0
        let proxy = try ProxyHarness(configuration: configuration)
        var generator = SystemRandomNumberGenerator()
        for n in 0..<200 {
            let client = try RawClient(port: proxy.port)
            try client.send("CONNECT localhost:\(origin.port) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _ = try client.reader.readHead()
            // A TLS record header announcing a ClientHello, then some of it, then gone.
            var bytes: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]
            bytes += (0..<Int.random(in: 0..<300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            try client.socket.send(Array(bytes.prefix(1 + n % bytes.count)))
            if n % 2 == 0 { client.socket.abort() } else { client.socket.close() }
        }
        #expect(proxy.waitUntil(timeout: 10) { proxy.onLoop { $0.openConnections } == 0 })
        let counted = proxy.onLoop { $0.stats.tlsCertificateRefusals + $0.stats.tlsHandshakeFailures }
        #expect(counted == 200)
        // And the next client is served.
        let served = try Self.curl(origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert)
        #expect(served.status == 200)
    }

    @Test(
        "A Host field names the tunnel's authority: case and surrounding blanks aside, with its port or none",
        arguments: [
            ("localhost:8443", true), ("localhost", true), (" \tLocalHost:8443 ", true), ("LOCALHOST", true),
            ("localhost:08443", true), ("localhost:443", false), ("localhost:", false), ("localhost:+8443", false),
            ("localhost:8443x", false), ("localhost:99999", false), ("evil.test:8443", false),
            ("localhost.:8443", false),
            ("", false), ("localhos:8443", false), ("local host", false),
        ])
    func hostFieldNamesTheAuthority(field: String, names: Bool) {
        #expect(Interception.names(field, host: "localhost", port: 8443) == names)
        #expect(Interception.names("[::1]", host: "[::1]", port: 8443))
        #expect(Interception.names("[::1]:8443", host: "[::1]", port: 8443))
        #expect(!Interception.names("[::1]:443", host: "[::1]", port: 8443))
        #expect("Ex.Test".lowercasedUnlessPlain() == "ex.test" && "ÄB.test".lowercasedUnlessPlain() == "äb.test")
        #expect(Interception.names(" ÄB.test:8443", host: "äb.test", port: 8443))
        #expect(!Interception.names("ÄB.test:+8443", host: "äb.test", port: 8443))
    }

    @Test("Inside a tunnel, a request for another authority is 421 and never forwarded; keep-alive works")
    func misdirected() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let wrong = try Self.curl(
            origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert, extra: ["-H", "Host: evil.test"])
        #expect(wrong.status == 421 && wrong.body.contains("misdirected-request"))
        // Its problem names the request's absolute URL on this connection, not a bare path.
        #expect(wrong.body.contains("\"url\":\"\(origin.url("/nostore"))\""), "\(wrong.body)")
        let wrongOverOne = try Self.curl(
            origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert,
            extra: ["--http1.1", "-H", "Host: evil.test"])
        #expect(wrongOverOne.status == 421)
        #expect(wrongOverOne.body.contains("\"url\":\"\(origin.url("/nostore"))\""), "\(wrongOverOne.body)")
        #expect(origin.requests == 0)
        // Two requests on one intercepted connection (curl reuses it): one handshake.
        let both = try Self.curl(
            origin.url("/nostore"), proxy: proxy.port, cacert: setup.caCert, extra: [origin.url("/nostore")])
        #expect(both.exitCode == 0 && both.body.components(separatedBy: "fresh every time").count == 3)
        #expect(proxy.onLoop { $0.stats.tlsIntercepted } == 3)  // one per refused request, one for the two that share it
        #expect(origin.requests == 2)
    }

    @Test(
        "Heads that do not arrive in one read (two writes, over one TLS record, pipelined) are read as on the plain port"
    )
    func headsInSeveralReads() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let result = try TestVenv.run(
            "intercept/heads.py", [String(proxy.port), "localhost", String(origin.port), setup.caCert]
        ).json
        #expect(result["split"] as? [String] == ["HTTP/1.1 200 OK"], "\(result)")
        #expect(result["large"] as? [String] == ["HTTP/1.1 200 OK"], "\(result)")
        #expect(result["pipelined"] as? Int == 30, "\(result)")
        #expect((result["seconds"] as? Double ?? 99) < 3, "no header timeout waited out: \(result)")
    }

    @Test("A client's close_notify is answered at once, also when its request came with it; a forged record closes")
    func clientClosesTLS() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let result = try TestVenv.run(
            "intercept/closing.py", [String(proxy.port), "localhost", String(origin.port), setup.caCert]
        ).json
        for version in ["1.2", "1.3"] {
            let after = result["after \(version)"] as? [String: Any] ?? [:]
            #expect(after["close_notify"] as? Bool == true && after["closed"] as? Bool == true, "\(after)")
            let together = result["together \(version)"] as? [String: Any] ?? [:]
            #expect(together["status"] as? String == "HTTP/1.1 200 OK", "the request sent with the close: \(together)")
            #expect(together["close_notify"] as? Bool == true && together["closed"] as? Bool == true, "\(together)")
            let forged = result["forged \(version)"] as? [String: Any] ?? [:]
            #expect(forged["closed"] as? Bool == true, "\(forged)")
        }
    }

    @Test("An intercepted exchange is an event on /events, with its https URL and TLS timing")
    func eventStream() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let watcher = try RawClient(port: try proxy.startAdmin())
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try watcher.reader.readHead()
        #expect(proxy.waitUntil { proxy.onLoop { $0.session.eventMonitor.monitors.count } >= 2 })
        _ = try Self.curl(origin.url("/json"), proxy: proxy.port, cacert: setup.caCert)
        // `start` (and maybe `progress`) come first; the `exchange` event is the completed one.
        var data: String?
        var kind = ""
        for _ in 0..<30 where data == nil {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            if line.hasPrefix("data: "), kind == "exchange" { data = String(line.dropFirst(6)) }
        }
        let event = try #require(
            (try? JSONSerialization.jsonObject(with: Data((data ?? "").utf8))) as? [String: Any])
        #expect(event["url"] as? String == origin.url("/json"))
        #expect(event["status"] as? Int == 200)
        #expect(event["rule"] as? String == "api")
        let timeline = try #require(event["timeline"] as? [String: Any])
        #expect((timeline["tls_ms"] as? Double ?? 0) > 0, "the upstream TLS handshake is timed")
    }

    @Test("Plain HTTP after an intercepted CONNECT is served by Sluice (a bare Host names the CONNECT's authority)")
    func nonTLSTunnelled() throws {
        let setup = try Setup()
        let origin = try OriginServer { _ in .text("plain inside") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let client = try RawClient(port: proxy.port)
        try client.send("CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        #expect(try client.reader.readHead()?.startLine.hasPrefix("HTTP/1.1 200") == true)
        try client.send("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let inside = try? client.reader.readResponse()
        #expect(inside?.text == "plain inside", "\(proxy.logLines.all)")
        #expect(proxy.onLoop { ($0.stats.tunnelsCarryingHTTP, $0.stats.tunnels) } == (1, 0), "no tunnel was opened")
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("\"GET http://127.0.0.1:\(origin.port)/x\" 200") }
            }, "\(proxy.logLines.all)")
    }

    @Test("After an intercepted CONNECT, first bytes that never say what they are go blind after a second")
    func undecidedFirstBytes() throws {
        let setup = try Setup()
        let echo = try EchoServer()
        defer { echo.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: echo.port))
        let client = try RawClient(port: proxy.port)
        try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n\r\n")
        #expect(try client.reader.readHead()?.startLine.hasPrefix("HTTP/1.1 200") == true)
        try client.send("HELO")  // could still be a method: held, then relayed as it is
        #expect(try client.reader.readExactly(4) == Array("HELO".utf8))
        #expect(proxy.onLoop { $0.stats.tunnels } == 1)
    }

    @Test("serve refuses a CA key that the group or others can read")
    func keyPermissions() throws {
        let setup = try Setup()
        _ = try ProxyHarness(configuration: setup.configuration(connectPort: 443))  // creates the CA
        chmod(setup.caKey, 0o644)
        #expect(throws: (any Error).self) { _ = try ProxyHarness(configuration: setup.configuration(connectPort: 443)) }
        do {
            _ = try ProxyHarness(configuration: setup.configuration(connectPort: 443))
        } catch {
            #expect("\(error)".contains("chmod 600"))
        }
    }

    /// `sha256//…` of a certificate's public key, as curl and the rules spell pins.
    static func pin(ofCertificateAt path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            "openssl x509 -in '\(path)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return "sha256//" + String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
