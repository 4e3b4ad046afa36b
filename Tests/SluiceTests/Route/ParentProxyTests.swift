import EventIO
import Foundation
import Testing

@testable import Sluice

@Suite("Parent proxies: parsing, routing, the tunnel handshake")
struct ParentProxyTests {
    @Test("URLs: schemes, default ports, IPv6, credentials kept out of the description")
    func parse() throws {
        let plain = try ParentProxy.parse("http://Proxy.Corp:3128").get()
        #expect(plain.scheme == .http && plain.host == "proxy.corp" && plain.port == 3128)
        #expect(plain.description == "http://proxy.corp:3128")
        #expect(try ParentProxy.parse("socks5h://10.0.0.1").get().port == 1080)
        #expect(try ParentProxy.parse("https://[::1]:8443/").get().description == "https://[::1]:8443")
        let secret = try ParentProxy.parse("http://al%40ice:p%3Ass word@127.0.0.1:8080").get()
        #expect(secret.username == "al@ice" && secret.password == "p:ss word")
        #expect(!secret.description.contains("p:ss") && secret.description.contains("with credentials"))
        #expect(secret.curlURL == "http://al%40ice:p%3Ass%20word@127.0.0.1:8080")
        #expect(secret.basicAuthorization == "Basic " + ParentProxy.base64(Array("al@ice:p:ss word".utf8)))
        #expect(ParentProxy.base64(Array("user:s3cret".utf8)) == "dXNlcjpzM2NyZXQ=")
        #expect(ParentProxy.base64(Array("ab".utf8)) == "YWI=" && ParentProxy.base64(Array("abc".utf8)) == "YWJj")
        for bad in [
            "proxy:3128", "ftp://p:21", "http://p:0", "http://p:99999", "http://p/path", "http://:8080", "http://@p:1",
        ] {
            #expect(throws: ParentProxy.ParseError.self, "\(bad)") { try ParentProxy.parse(bad).get() }
        }
    }

    @Test(
        "Routing: no_proxy hosts, domains, globs and CIDRs go direct; a rule's choice wins; env splits http and https")
    func routing() throws {
        let parent = try ParentProxy.parse("http://parent:3128").get()
        let other = try ParentProxy.parse("socks5h://other:1080").get()
        var routing = ParentRouting(forHTTP: parent, forHTTPS: parent)
        for item in ["internal.example", "*.corp", "10.0.0.0/8", "::1", "127.0.0.1"] {
            routing.exceptions += try #require(ParentRouting.exceptions(item))
        }
        #expect(routing.parent(host: "example.com", https: false, rule: nil) == parent)
        #expect(routing.parent(host: "internal.example", https: false, rule: nil) == nil)
        #expect(routing.parent(host: "api.internal.example", https: true, rule: nil) == nil)
        #expect(routing.parent(host: "notinternal.example", https: true, rule: nil) == parent)
        #expect(routing.parent(host: "build.corp", https: false, rule: nil) == nil)
        #expect(routing.parent(host: "10.1.2.3", https: false, rule: nil) == nil)
        #expect(routing.parent(host: "11.1.2.3", https: false, rule: nil) == parent)
        #expect(routing.parent(host: "[::1]", https: false, rule: nil) == nil)
        #expect(routing.parent(host: "127.0.0.1", https: false, rule: nil) == nil)
        #expect(routing.parent(host: "example.com", https: false, rule: .direct) == nil)
        #expect(routing.parent(host: "10.1.2.3", https: false, rule: .parent(other)) == other)
        #expect(ParentRouting(forHTTP: parent, exceptions: [.all]).parent(host: "a", https: false, rule: nil) == nil)

        var settings = Configuration.Upstream()
        settings.proxy = .environment
        let environment = [
            "HTTP_PROXY": "http://plain:3128", "https_proxy": "http://secure:3129", "NO_PROXY": "localhost,.local",
        ]
        let fromEnvironment = try settings.parentRouting(environment: { environment[$0] }).get()
        #expect(fromEnvironment.forHTTP?.host == "plain" && fromEnvironment.forHTTPS?.host == "secure")
        #expect(fromEnvironment.parent(host: "printer.local", https: false, rule: nil) == nil)
        #expect(fromEnvironment.parent(host: "localhost", https: true, rule: nil) == nil)
        settings.proxy = .none
        #expect(try settings.parentRouting(environment: { environment[$0] }).get().forHTTP == nil)
    }

    @Test("Configuration: upstream.proxy, no_proxy, ${VAR} credentials, a rule's proxy; a parent that is the listener")
    func configuration() throws {
        setenv("SLUICE_TEST_PARENT_PASSWORD", "from-env", 1)
        let configuration = try ConfigLoader.load(
            yaml: """
                upstream:
                  proxy: http://me:${SLUICE_TEST_PARENT_PASSWORD}@127.0.0.1:3128
                  no_proxy: [localhost, 10.0.0.0/8, .intranet]
                rules:
                  - name: direct-api
                    match: { host: "api.example" }
                    proxy: none
                  - name: via-socks
                    match: { host: "*.onion" }
                    proxy: socks5h://127.0.0.1:9050
                """)
        guard case .url(let parent) = configuration.upstream.proxy else {
            Issue.record("upstream.proxy is a URL")
            return
        }
        #expect(parent.password == "from-env" && !parent.description.contains("from-env"))
        #expect(configuration.upstream.noProxy.count == 5)  // a name covers itself and its subdomains: two each
        #expect(configuration.rules[0].proxy == .direct)
        #expect(configuration.rules[1].proxy == .parent(try ParentProxy.parse("socks5h://127.0.0.1:9050").get()))
        #expect(throws: ConfigError.self) {
            try ConfigLoader.load(yaml: "upstream:\n  proxy: http://x:${SLUICE_UNSET_VAR_X}@p:1\n")
        }
        #expect(throws: ConfigError.self) { try ConfigLoader.load(yaml: "upstream:\n  proxy: gopher://p:70\n") }
        #expect(throws: ConfigError.self) { try ConfigLoader.load(yaml: "upstream:\n  no_proxy: [\"a b\"]\n") }

        let listening = SocketAddress(ip: [127, 0, 0, 1], port: 8080)
        var looped = Configuration()
        looped.upstream.proxy = .url(try ParentProxy.parse("http://localhost:8080").get())
        #expect(throws: ParentProxyRefused.self) { try ProxyServer.parents(looped, listening: listening) }
        looped.upstream.proxy = .url(try ParentProxy.parse("http://127.0.0.1:8081").get())
        #expect(try ProxyServer.parents(looped, listening: listening).forHTTP?.port == 8081)

        // An https:// parent's CA file travels with the parent chosen; one that cannot be read
        // stops the start.
        let secure = try ConfigLoader.load(
            yaml: "upstream:\n  proxy: https://proxy.corp:8443\n  proxy_ca_file: /nonexistent/corp-ca.pem\n")
        let routing = try ProxyServer.parents(secure, listening: listening)
        #expect(routing.parent(host: "example.com", https: true, rule: nil)?.caFile == "/nonexistent/corp-ca.pem")
        #expect(throws: ParentProxyRefused.self) { try ProxyServer.parentTLS(secure, routing: routing) }
        #expect(try ProxyServer.parentTLS(looped, routing: ProxyServer.parents(looped, listening: listening)) == nil)
    }

    @Test("The tunnel handshake: HTTP CONNECT with Basic credentials; SOCKS5 with user and password; refusals")
    func handshake() throws {
        func receive(_ handshake: inout ParentHandshake, _ bytes: [UInt8]) -> ParentHandshake.Step {
            bytes.withUnsafeBytes { handshake.receive($0) }
        }
        let http = try ParentProxy.parse("http://u:p@parent:3128").get()
        var connect = ParentHandshake(parent: http, host: "example.com", port: 443)
        #expect(
            String(decoding: connect.opening, as: UTF8.self)
                == "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
        )
        #expect(receive(&connect, Array("HTTP/1.1 200 Connection established\r\n".utf8)) == .needMore)
        let answer = Array("HTTP/1.1 200 Connection established\r\nVia: 1.1 p\r\n\r\nTLS".utf8)
        #expect(receive(&connect, answer) == .established(consumed: answer.count - 3))
        // A status line without a reason phrase (nor the space before it) is still an answer.
        var terse = ParentHandshake(parent: http, host: "example.com", port: 443)
        let bare = Array("HTTP/1.1 200\r\n\r\n".utf8)
        #expect(receive(&terse, bare) == .established(consumed: bare.count))
        var refused = ParentHandshake(parent: http, host: "example.com", port: 443)
        #expect(
            receive(&refused, Array("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n".utf8))
                == .failed(.upstreamFailed(reason: .parentAuthRequired(parent: http.description))))
        var forbidden = ParentHandshake(parent: http, host: "example.com", port: 443)
        guard case .failed(let error) = receive(&forbidden, Array("HTTP/1.1 403 Forbidden\r\n\r\n".utf8)) else {
            Issue.record("a 403 fails the tunnel")
            return
        }
        #expect(Problem(error).detail.contains("403") && !Problem(error).detail.contains("u:p"))

        let socks = try ParentProxy.parse("socks5h://user:pw@s:1080").get()
        var shake = ParentHandshake(parent: socks, host: "example.com", port: 443)
        #expect(shake.opening == [5, 2, 0, 2])
        #expect(receive(&shake, [5, 2]) == .reply([1, 4] + Array("user".utf8) + [2] + Array("pw".utf8), consumed: 2))
        #expect(
            receive(&shake, [1, 0]) == .reply([5, 1, 0, 3, 11] + Array("example.com".utf8) + [1, 187], consumed: 2))
        #expect(receive(&shake, [5, 0, 0, 1, 10, 0, 0]) == .needMore)
        #expect(receive(&shake, [5, 0, 0, 1, 10, 0, 0, 1, 0, 80]) == .established(consumed: 10))
        var badPassword = ParentHandshake(parent: socks, host: "example.com", port: 443)
        _ = receive(&badPassword, [5, 2])
        #expect(
            receive(&badPassword, [1, 1])
                == .failed(.upstreamFailed(reason: .parentAuthRequired(parent: socks.description))))
        // An https:// parent gets the same CONNECT, inside the TLS the tunnel agreed with it.
        let secure = ParentHandshake(parent: try ParentProxy.parse("https://p:443").get(), host: "a", port: 443)
        #expect(String(decoding: secure.opening, as: UTF8.self) == "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n")
    }
}
