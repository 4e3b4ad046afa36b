import Foundation
import Sluice
import SluiceTestKit
import Synchronization
import Testing

/// What one client can make the shared cache hand to another: poisoning through unkeyed headers,
/// cache deception, personal responses, Vary, and credentials in the file.
@Suite("Adversarial: cache safety")
struct CacheSafetyTests {
    /// An origin that reflects request fields into a cacheable body, as poisoned frameworks do.
    static func reflectingOrigin(extra: [(String, String)] = []) throws -> OriginServer {
        try OriginServer { request in
            let host = request.header("x-forwarded-host") ?? request.header("x-host") ?? "example.com"
            let path =
                ["x-original-url", "x-rewrite-url", "x-original-uri", "x-forwarded-uri", "x-envoy-original-path"]
                .lazy.compactMap { request.header($0) }.first ?? request.target
            return .respond(
                status: 200, headers: [("Content-Type", "text/html"), ("Cache-Control", "max-age=600")] + extra,
                body: Array("<script src=\"https://\(host)/app.js\"></script> page \(path)".utf8))
        }
    }

    @Test(
        "Unkeyed request headers cannot poison the shared cache",
        arguments: [
            ("X-Forwarded-Host", "evil.example"), ("X-Host", "evil.example"), ("X-Original-URL", "/admin"),
            ("X-Rewrite-URL", "/admin"), ("X-Forwarded-Scheme", "http"), ("X-HTTP-Method-Override", "DELETE"),
            ("Forwarded", "host=evil.example"), ("X_Forwarded_Host", "evil.example"), ("X-Original-URI", "/admin"),
            ("X-Forwarded-Uri", "/admin"), ("X-Envoy-Original-Path", "/admin"),
        ])
    func unkeyedHeaders(name: String, value: String) throws {
        let origin = try Self.reflectingOrigin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let attacker = try RawClient(port: proxy.port)
        let poisoned = try attacker.request(RawClient.get(origin.url("/home"), extra: "\(name): \(value)\r\n"))
        #expect(poisoned.header("cache-status")?.contains("detail=unkeyed-request-header") == true)
        let victim = try RawClient(port: proxy.port)
        let page = try victim.request(RawClient.get(origin.url("/home")))
        #expect(!page.text.contains("evil") && !page.text.contains("admin"))
        #expect(page.header("cache-status")?.contains("fwd=") == true, "the victim's request went to the origin")
        #expect(origin.requests.count == 2)
        // Once the clean response is stored, the attacker's header changes nothing either.
        _ = try attacker.request(RawClient.get(origin.url("/home"), extra: "\(name): \(value)\r\n"))
        #expect(try victim.request(RawClient.get(origin.url("/home"))).text == page.text)
    }

    @Test("A response that varies on the header is stored per value, and each client gets its own")
    func keyedByVary() throws {
        let origin = try Self.reflectingOrigin(extra: [("Vary", "X-Forwarded-Host")])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let evil = try client.request(RawClient.get(origin.url("/v"), extra: "X-Forwarded-Host: evil.example\r\n"))
        #expect(evil.text.contains("evil.example"))
        let plain = try client.request(RawClient.get(origin.url("/v")))
        #expect(!plain.text.contains("evil"))
        #expect(try client.request(RawClient.get(origin.url("/v"))).header("cache-status")?.contains("hit") == true)
    }

    @Test("Cache deception: /account/x.css with the victim's cookie is not kept on a heuristic or a rule's TTL")
    func deception() throws {
        let origin = try OriginServer { request in
            let user = request.header("cookie").map { "account of \($0)" } ?? "please log in"
            return .respond(
                status: 200,
                headers: [("Content-Type", "text/html"), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")],
                body: Array(user.utf8))
        }
        defer { origin.stop() }
        var configuration = Configuration()
        // A rule that gives stylesheets a TTL, as people write to cache static files.
        configuration.rules = [
            try ConfigLoader.load(
                yaml: "rules:\n  - name: static\n    match: { path: \"/**/*.css\" }\n    cache: { ttl: 1h }\n"
            ).rules[0]
        ]
        let proxy = try ProxyHarness(configuration: configuration)
        let victim = try RawClient(port: proxy.port)
        let lured = try victim.request(
            RawClient.get(origin.url("/account/x.css"), extra: "Cookie: session=victim-secret\r\n"))
        #expect(lured.text.contains("victim-secret"))
        #expect(lured.header("cache-status")?.contains("detail=cookie-without-explicit-freshness") == true)
        let attacker = try RawClient(port: proxy.port)
        let fetched = try attacker.request(RawClient.get(origin.url("/account/x.css")))
        #expect(fetched.text == "please log in")
    }

    @Test("private and Set-Cookie responses are never shared, not even with collapsed waiters")
    func personalResponses() throws {
        let counter = Mutex(0)
        let origin = try OriginServer { request in
            let n = counter.withLock {
                $0 += 1
                return $0
            }
            let personal: (String, String) =
                request.target == "/private" ? ("Cache-Control", "private, max-age=600") : ("Set-Cookie", "id=\(n)")
            return .delay(
                seconds: 0.2,
                then: .respond(
                    status: 200, headers: [("Cache-Control", "max-age=600"), personal],
                    body: Array("for request \(n)".utf8)))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        for path in ["/private", "/cookie"] {
            // Concurrent requests each get their own response, whatever the collapser does.
            let bodies = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                guard let client = try? RawClient(port: proxy.port),
                    let response = try? client.request(RawClient.get(origin.url(path)))
                else { return }
                bodies.withLock { $0.append(response.text) }
            }
            let seen = bodies.withLock { $0 }
            #expect(seen.count == 8)
            #expect(Set(seen).count == 8, "\(path): one response was handed to several clients: \(seen)")
        }
    }

    @Test("Vary is respected: each language gets its own stored variant")
    func varyRespected() throws {
        let origin = try OriginServer { request in
            .respond(
                status: 200, headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")],
                body: Array("lang \(request.header("accept-language") ?? "none")".utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for _ in 0..<2 {
            for language in ["en", "fr", "de"] {
                let response = try client.request(
                    RawClient.get(origin.url("/greeting"), extra: "Accept-Language: \(language)\r\n"))
                #expect(response.text == "lang \(language)")
            }
        }
        #expect(origin.requests.count == 3)
    }

    @Test("Credentials never land in the shared cache file")
    func credentialsNotStored() throws {
        let origin = try OriginServer { request in
            var headers = [("Cache-Control", "public, max-age=600")]
            if request.target == "/varies" { headers.append(("Vary", "Cookie")) }
            return .respond(status: 200, headers: headers, body: Array("shared content".utf8))
        }
        defer { origin.stop() }
        let path = TestScratch.root.appendingPathComponent("sluice-cred-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var configuration = Configuration()
        configuration.cache.path = path
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        // public: the response may be shared (RFC 9111 §3.5), but not the Authorization that asked for it.
        let bearer = try client.request(
            RawClient.get(origin.url("/public"), extra: "Authorization: Bearer TOKEN-4f1d2c\r\n"))
        #expect(bearer.header("cache-status")?.contains("stored") == true)
        // A response that varies on Cookie would key the entry on the cookie's value: not stored.
        let varied = try client.request(
            RawClient.get(origin.url("/varies"), extra: "Cookie: session=COOKIE-9a8b7c\r\n"))
        #expect(varied.header("cache-status")?.contains("detail=varies-on-credentials") == true)
        // Without a cookie the anonymous variant is stored as usual.
        let anonymous = try client.request(RawClient.get(origin.url("/varies")))
        #expect(anonymous.header("cache-status")?.contains("stored") == true)
        proxy.shutdown()
        var bytes = Data()
        for suffix in ["", "-wal"] { bytes += (try? Data(contentsOf: URL(fileURLWithPath: path + suffix))) ?? Data() }
        #expect(!bytes.isEmpty)
        #expect(bytes.range(of: Data("TOKEN-4f1d2c".utf8)) == nil)
        #expect(bytes.range(of: Data("COOKIE-9a8b7c".utf8)) == nil)
    }
}
