import Foundation
import SluiceTestKit
import Synchronization
import Testing

@testable import Sluice

/// Sluice behind a parent proxy, end to end: another Sluice as the parent (plain requests, a
/// POST body, a blind CONNECT to an HTTPS origin), parents that want credentials, parents that
/// are down, and the targets that go direct.
@Suite("Upstream (parent) proxy")
struct UpstreamProxyTests {
    static func configuration(_ yaml: String) throws -> Configuration { try ConfigLoader.load(yaml: yaml) }

    static func problem(_ response: ReceivedResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    /// Whether the server program a test runs is there; an issue is recorded when it is not.
    static func installed(_ path: String) -> Bool {
        guard LoopbackDaemon.isInstalled(path) else {
            Issue.record("\(path) is not installed (scripts/setup.sh --tests installs it)")
            return false
        }
        return true
    }

    /// An origin that answers with the `Via` its request arrived with.
    static func viaOrigin() throws -> OriginServer {
        try OriginServer { request in
            .respond(
                status: 200, headers: [("Cache-Control", "no-store")],
                body: Array("via [\(request.header("via") ?? "")]".utf8))
        }
    }

    /// An intercepting Sluice with `upstream` (configuration lines) fetches `/json` from
    /// `secure` through its parent twice: validated and stripped, then a cache hit.
    static func expectInterceptedAndCached(
        through upstream: String, _ setup: InterceptionTests.Setup, _ secure: HTTPSOrigin
    ) throws {
        let intercepting = try ProxyHarness(
            configuration: setup.configuration(tls: upstream, connectPort: secure.port))
        let first = try InterceptionTests.curl(secure.url("/json"), proxy: intercepting.port, cacert: setup.caCert)
        #expect(first.status == 200 && first.body == #"{"a":1,"c":[null,{}]}"#)
        let second = try InterceptionTests.curl(secure.url("/json"), proxy: intercepting.port, cacert: setup.caCert)
        #expect(second.headers["cache-status"]?.contains("hit") == true)
    }

    @Test(
        "Sluice → Sluice: GET and POST go through the parent, which adds its Via; the child never reaches the origin itself"
    )
    func chain() throws {
        let origin = try OriginServer { request in
            .respond(
                status: 200, headers: [("Cache-Control", "no-store")],
                body: Array(
                    "\(request.method) \(request.target) via [\(request.header("via") ?? "")] body=\(request.body.count)"
                        .utf8))
        }
        defer { origin.stop() }
        let parent = try ProxyHarness()
        let child = try ProxyHarness(
            configuration: Self.configuration("upstream:\n  proxy: http://127.0.0.1:\(parent.port)\n"))
        let client = try RawClient(port: child.port)
        let got = try client.request(RawClient.get(origin.url("/chained")))
        #expect(got.status == 200)
        #expect(String(decoding: got.body, as: UTF8.self) == "GET /chained via [1.1 sluice, 1.1 sluice] body=0")
        let posted = try client.request(
            "POST \(origin.url("/form")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 5000\r\n\r\n"
                + String(repeating: "p", count: 5000), method: "POST")
        #expect(String(decoding: posted.body, as: UTF8.self).hasSuffix("body=5000"))
        #expect(parent.onLoop { $0.stats.requests } == 2, "both went through the parent")
        #expect(origin.requests.count == 2)
    }

    @Test("A blind CONNECT goes through the parent's own CONNECT to an HTTPS origin")
    func tunnelThroughParent() throws {
        let setup = try InterceptionTests.Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let parent = try ProxyHarness(configuration: Self.configuration("connect_ports: [\(origin.port)]\n"))
        let child = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [\(origin.port)]\nupstream:\n  proxy: http://127.0.0.1:\(parent.port)\n"))
        let response = try InterceptionTests.curl(origin.url("/json"), proxy: child.port, cacert: setup.originCAPath)
        #expect(response.exitCode == 0 && response.status == 200)
        #expect(response.body.contains("\"a\":1"))
        #expect(parent.waitUntil { parent.onLoop { $0.stats.tunnels } == 1 })

        // Intercepted HTTPS goes through the parent too (libcurl's tunnel), validated and cached
        // by the child like any other.
        try Self.expectInterceptedAndCached(
            through: "upstream:\n  proxy: http://127.0.0.1:\(parent.port)", setup, origin)
        #expect(parent.waitUntil { parent.onLoop { $0.stats.tunnels } == 2 }, "the child's upstream tunnel")
    }

    @Test("A parent that wants credentials: 502 upstream-proxy-auth-required naming it; with them, the request passes")
    func credentials() throws {
        let expected = "Basic " + ParentProxy.base64(Array("alice:s3cret pass".utf8))
        // A parent that answers itself: 407 without the right credentials, 200 with them.
        let parent = try OriginServer { request in
            guard request.header("proxy-authorization") == expected else {
                return .respond(
                    status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"corp\"")], body: Array("who?".utf8))
            }
            if request.method == "CONNECT" {
                return .rawKeepAlive(Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".utf8))
            }
            return .respond(
                status: 200, headers: [("Cache-Control", "no-store")], body: Array("through \(request.target)".utf8))
        }
        defer { parent.stop() }
        let anonymous = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [443]\nupstream:\n  proxy: http://127.0.0.1:\(parent.port)\n"))
        let refused = try RawClient(port: anonymous.port).request(RawClient.get("http://example.test/x"))
        #expect(refused.status == 502)
        #expect(Self.problem(refused)["type"] as? String == Problem.typeBase + "upstream-proxy-auth-required")
        #expect((Self.problem(refused)["detail"] as? String)?.contains("http://127.0.0.1:\(parent.port)") == true)
        #expect(refused.header("proxy-authenticate") == nil, "the client is never asked for the parent's credentials")
        let tunnel = try RawClient(port: anonymous.port).request(
            "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n", method: "CONNECT")
        #expect(tunnel.status == 502)
        #expect(Self.problem(tunnel)["type"] as? String == Problem.typeBase + "upstream-proxy-auth-required")

        let proxy = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [443]\nupstream:\n  proxy: http://alice:s3cret%20pass@127.0.0.1:\(parent.port)\n"))
        let client = try RawClient(port: proxy.port)
        let passed = try client.request(RawClient.get("http://example.test/y"))
        #expect(passed.status == 200 && String(decoding: passed.body, as: UTF8.self) == "through http://example.test/y")
        let forbidden = try RawClient(port: proxy.port).request(
            "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n", method: "CONNECT")
        #expect(forbidden.status == 502)
        #expect(Self.problem(forbidden)["type"] as? String == Problem.typeBase + "upstream-proxy-failed")
        #expect((Self.problem(forbidden)["detail"] as? String)?.contains("403") == true)
        // The password is in no answer and no log line.
        for text in [refused.body, tunnel.body, forbidden.body].map({ String(decoding: $0, as: UTF8.self) })
            + proxy.logLines.all + anonymous.logLines.all
        {
            #expect(!text.contains("s3cret"), "\(text)")
        }
    }

    @Test("A parent that is down is a 502 upstream-proxy-failed; no_proxy targets and rules with proxy: none go direct")
    func downAndDirect() throws {
        let origin = try OriginServer { request in .text("direct \(request.target)") }
        defer { origin.stop() }
        let closed = try TestListener()
        let deadPort = closed.port
        closed.close()
        let proxy = try ProxyHarness(
            configuration: Self.configuration(
                """
                upstream:
                  proxy: http://127.0.0.1:\(deadPort)
                  no_proxy: [localhost]
                rules:
                  - name: straight
                    match: { path: "/straight/*" }
                    proxy: none
                """))
        let client = try RawClient(port: proxy.port)
        let failed = try client.request(RawClient.get(origin.url("/anything")))
        #expect(failed.status == 502)
        #expect(Self.problem(failed)["type"] as? String == Problem.typeBase + "upstream-proxy-failed")
        #expect((Self.problem(failed)["detail"] as? String)?.contains("127.0.0.1:\(deadPort)") == true)
        let direct = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/straight/on")))
        #expect(direct.status == 200 && String(decoding: direct.body, as: UTF8.self) == "direct /straight/on")
        let local = try RawClient(port: proxy.port).request(
            RawClient.get("http://localhost:\(origin.port)/local"))
        #expect(local.status == 200 && String(decoding: local.body, as: UTF8.self) == "direct /local")
        let tunnel = try RawClient(port: proxy.port).request(
            "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n", method: "CONNECT")
        #expect(tunnel.status == 502)
        #expect(Self.problem(tunnel)["type"] as? String == Problem.typeBase + "upstream-proxy-failed")
    }

    /// Debian's Squid on a free loopback port, for as long as the test needs it.
    @Test("Sluice → Debian's Squid: plain requests and blind CONNECT tunnels go through it")
    func throughSquid() throws {
        guard Self.installed("/usr/sbin/squid") else { return }
        // Squid started as root works as the `proxy` user: its folder is open to it.
        let squid = try LoopbackDaemon(
            "/usr/sbin/squid",
            files: { port, directory in
                [
                    "squid.conf": """
                    http_port 127.0.0.1:\(port)
                    http_access allow localhost
                    http_access deny all
                    pid_filename \(directory.path)/squid.pid
                    cache_log \(directory.path)/cache.log
                    access_log none
                    cache deny all
                    pinger_enable off
                    netdb_filename none
                    shutdown_lifetime 0 seconds
                    coredump_dir \(directory.path)
                    """
                ]
            }, shared: true
        ) { _, directory in ["-N", "-f", directory.appendingPathComponent("squid.conf").path] }
        let origin = try Self.viaOrigin()
        defer { origin.stop() }
        let setup = try InterceptionTests.Setup()
        let secure = try HTTPSOrigin(authority: setup.originCA)
        defer { secure.stop() }
        let proxy = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [\(secure.port)]\nupstream:\n  proxy: http://127.0.0.1:\(squid.port)\n"))
        let got = try RawClient(port: proxy.port).request(RawClient.get(origin.url("/through-squid")))
        #expect(got.status == 200)
        let via = String(decoding: got.body, as: UTF8.self)
        #expect(via.contains("1.1 sluice") && via.contains("squid"), "\(via)")
        let tunnelled = try InterceptionTests.curl(secure.url("/json"), proxy: proxy.port, cacert: setup.originCAPath)
        #expect(tunnelled.exitCode == 0 && tunnelled.status == 200 && tunnelled.body.contains("\"a\":1"))
    }

    /// An `https://` parent: Debian's stunnel terminating TLS (a certificate for 127.0.0.1 from
    /// the test CA) in front of another Sluice.
    static func httpsParent(_ setup: InterceptionTests.Setup, to parent: ProxyHarness) throws -> LoopbackDaemon {
        let issued = try setup.originCA.issueServerCertificate(for: "127.0.0.1", validFrom: -1, validDays: 30)
        return try LoopbackDaemon(
            "/usr/bin/stunnel4",
            files: { port, directory in
                [
                    "cert.pem": issued.certificate, "key.pem": issued.key,
                    "stunnel.conf": """
                    foreground = yes
                    pid =
                    [parent]
                    accept = 127.0.0.1:\(port)
                    connect = 127.0.0.1:\(parent.port)
                    cert = \(directory.path)/cert.pem
                    key = \(directory.path)/key.pem
                    """,
                ]
            }
        ) { _, directory in [directory.appendingPathComponent("stunnel.conf").path] }
    }

    @Test(
        "An https:// parent (stunnel in front of Sluice): blind CONNECT tunnels inside TLS to it, 5 MB intact; plain and intercepted requests through libcurl; an untrusted parent is a 502 that says so"
    )
    func throughHTTPSParent() throws {
        guard Self.installed("/usr/bin/stunnel4") else { return }
        let setup = try InterceptionTests.Setup()
        let secure = try HTTPSOrigin(authority: setup.originCA)
        defer { secure.stop() }
        let origin = try Self.viaOrigin()
        defer { origin.stop() }
        let echo = try EchoServer()
        defer { echo.stop() }
        let parent = try ProxyHarness(
            configuration: Self.configuration("connect_ports: [\(secure.port), \(echo.port)]\n"))
        let stunnel = try Self.httpsParent(setup, to: parent)
        let upstream = "upstream:\n  proxy: https://127.0.0.1:\(stunnel.port)\n"
        let child = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [\(secure.port)]\n\(upstream)  proxy_ca_file: \(setup.originCAPath)\n"))

        // A blind tunnel: CONNECT inside TLS to the parent, then the origin's own TLS inside that.
        let tunnelled = try InterceptionTests.curl(secure.url("/json"), proxy: child.port, cacert: setup.originCAPath)
        #expect(tunnelled.exitCode == 0 && tunnelled.status == 200 && tunnelled.body.contains("\"a\":1"))
        #expect(parent.waitUntil { parent.onLoop { $0.stats.tunnels } == 1 })
        // 5 MB through both TLS layers, checked byte for byte by curl's own count and a digest.
        let size = 5_000_000
        let big = try InterceptionTests.curl(
            secure.url("/big?n=\(size)"), proxy: child.port, cacert: setup.originCAPath)
        #expect(big.exitCode == 0 && big.status == 200)
        #expect(Array(big.body.utf8) == HTTPSOrigin.bigBody(count: size), "the 5 MB arrived intact")
        // The second tunnel resumed the TLS session the parent gave the first (which ended with
        // close_notify, so the session stayed resumable).
        #expect(child.onLoop { ($0.stats.parentTLSHandshakes, $0.stats.parentTLSResumed) } == (2, 1))

        // Both ways, with a half-close: the client's end becomes close_notify to the parent, and
        // the echo's bytes and end still come back.
        let echoing = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [\(echo.port)]\n\(upstream)  proxy_ca_file: \(setup.originCAPath)\n"))
        let client = try RawClient(port: echoing.port)
        try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n\r\n")
        #expect(try client.reader.readHead()?.startLine.hasPrefix("HTTP/1.1 200") == true)
        let payload = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 31) })
        let socket = client.socket
        Thread {
            try? socket.send(payload)
            socket.shutdownWrite()
        }.start()
        #expect(try client.reader.readToEnd() == payload, "the echoed bytes through TLS to the parent")
        #expect(echoing.waitUntil { echoing.stats.connectionsOpen == 0 })

        // Plain requests go through it as libcurl's https:// proxy.
        let plain = try RawClient(port: child.port).request(RawClient.get(origin.url("/over-tls")))
        #expect(plain.status == 200)
        #expect(String(decoding: plain.body, as: UTF8.self) == "via [1.1 sluice, 1.1 sluice]")

        // Intercepted HTTPS goes through it as libcurl's tunnel, and is cached by the child.
        try Self.expectInterceptedAndCached(through: "\(upstream)  proxy_ca_file: \(setup.originCAPath)", setup, secure)

        // Without the CA file the parent's certificate is not trusted: a 502 naming it and why,
        // and nothing reaches the parent.
        let reached = parent.onLoop { ($0.stats.requests, $0.stats.tunnels) }
        let untrusting = try ProxyHarness(
            configuration: Self.configuration("connect_ports: [\(secure.port)]\n\(upstream)"))
        let refused = try RawClient(port: untrusting.port).request(
            "CONNECT 127.0.0.1:\(secure.port) HTTP/1.1\r\nHost: 127.0.0.1:\(secure.port)\r\n\r\n", method: "CONNECT")
        #expect(refused.status == 502)
        #expect(Self.problem(refused)["type"] as? String == Problem.typeBase + "upstream-proxy-failed")
        let detail = Self.problem(refused)["detail"] as? String ?? ""
        #expect(detail.contains("https://127.0.0.1:\(stunnel.port)") && detail.contains("not trusted"), "\(detail)")
        let refusedPlain = try RawClient(port: untrusting.port).request(RawClient.get(origin.url("/over-tls")))
        #expect(refusedPlain.status == 502)
        #expect(Self.problem(refusedPlain)["type"] as? String == Problem.typeBase + "upstream-proxy-failed")
        let plainDetail = Self.problem(refusedPlain)["detail"] as? String ?? ""
        #expect(plainDetail.contains("not trusted"), "\(plainDetail)")
        #expect(
            parent.onLoop { ($0.stats.requests, $0.stats.tunnels) } == reached,
            "none of the untrusting child's requests reached the parent")
    }

    @Test(
        "A SOCKS5 parent (Debian's microsocks, with user and password): plain, intercepted and blind requests by name; a wrong password is a 502 auth-required"
    )
    func throughSOCKS() throws {
        guard Self.installed("/usr/bin/microsocks") else { return }
        let socks = try LoopbackDaemon("/usr/bin/microsocks") { port, _ in
            ["-i", "127.0.0.1", "-p", String(port), "-u", "sluice", "-P", "s0cks pass"]
        }
        let setup = try InterceptionTests.Setup()
        let secure = try HTTPSOrigin(authority: setup.originCA)
        defer { secure.stop() }
        let origin = try OriginServer { request in .text("socks \(request.target)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [\(secure.port)]\nupstream:\n  proxy: socks5h://sluice:s0cks%20pass@127.0.0.1:\(socks.port)\n"
            ))
        let plain = try RawClient(port: proxy.port).request(RawClient.get("http://localhost:\(origin.port)/by-name"))
        #expect(plain.status == 200 && String(decoding: plain.body, as: UTF8.self) == "socks /by-name")
        // `localhost` is resolved by the SOCKS server, not by Sluice (socks5h).
        let tunnelled = try InterceptionTests.curl(secure.url("/json"), proxy: proxy.port, cacert: setup.originCAPath)
        #expect(tunnelled.exitCode == 0 && tunnelled.status == 200 && tunnelled.body.contains("\"a\":1"))
        #expect(origin.requests.count == 1)
        // Intercepted HTTPS goes through it too (libcurl's SOCKS5), validated and cached.
        try Self.expectInterceptedAndCached(
            through: "upstream:\n  proxy: socks5h://sluice:s0cks%20pass@127.0.0.1:\(socks.port)", setup, secure)

        let wrong = try ProxyHarness(
            configuration: Self.configuration(
                "connect_ports: [\(secure.port)]\nupstream:\n  proxy: socks5h://sluice:nope@127.0.0.1:\(socks.port)\n"))
        let refused = try RawClient(port: wrong.port).request(
            "CONNECT localhost:\(secure.port) HTTP/1.1\r\nHost: localhost:\(secure.port)\r\n\r\n", method: "CONNECT")
        #expect(refused.status == 502)
        #expect(Self.problem(refused)["type"] as? String == Problem.typeBase + "upstream-proxy-auth-required")
        let refusedPlain = try RawClient(port: wrong.port).request(RawClient.get(origin.url("/nope")))
        #expect(refusedPlain.status == 502)
        #expect(origin.requests.count == 1)
        for line in proxy.logLines.all + wrong.logLines.all { #expect(!line.contains("s0cks"), "\(line)") }
    }
}
