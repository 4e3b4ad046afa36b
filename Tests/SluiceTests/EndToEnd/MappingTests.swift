import Foundation
import Sluice
import SluiceTestKit
import Testing

@Suite("Map local, map remote and header rewriting through the proxy")
struct MappingTests {
    static func proxy(_ yaml: String) throws -> ProxyHarness {
        try ProxyHarness(configuration: try ConfigLoader.load(yaml: yaml))
    }

    static func temporaryFile(_ name: String, _ text: String) throws -> String {
        let directory = TestScratch.root.appendingPathComponent("sluice-map-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("respond answers with its status, fields and body; the origin is never asked; HEAD gets the head")
    func mapLocalText() throws {
        let origin = try OriginServer { _ in .text("from the origin") }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: mock
                match: { path: "/v1/user" }
                respond:
                  status: 201
                  headers: { Content-Type: application/json, X-Mock: "yes" }
                  body: '{"id": 1, "name": "Ada"}'
            """)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/v1/user")))
        #expect(response.status == 201)
        #expect(response.statusLine.hasSuffix("201 Created"))
        #expect(response.text == #"{"id": 1, "name": "Ada"}"#)
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("x-mock") == "yes")
        #expect(response.header("content-length") == "24")
        #expect(response.header("via") == "1.1 sluice")
        #expect(response.header("date") != nil)
        let head = try client.request(
            "HEAD \(origin.url("/v1/user")) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", method: "HEAD")
        #expect(head.status == 201 && head.body.isEmpty && head.header("content-length") == "24")
        // Other paths still reach the origin, on the same connection.
        #expect(try client.request(RawClient.get(origin.url("/v1/other"))).text == "from the origin")
        #expect(origin.requests.map(\.target) == ["/v1/other"])
    }

    @Test("A POST's small body is read and dropped: the connection stays open for the next request")
    func mapLocalPost() throws {
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - match: { path: "/submit", methods: [POST] }
                respond: { status: 202, body: accepted }
            """)
        let client = try RawClient(port: proxy.port)
        let url = origin.url("/submit")
        let posted = try client.request(
            "POST \(url) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(posted.status == 202 && posted.text == "accepted")
        #expect(posted.header("content-type") == "text/plain; charset=utf-8")
        #expect(posted.header("connection") == nil)
        let next = try client.request(RawClient.get(origin.url("/after")))
        #expect(next.text == "origin")
        #expect(origin.connectionCount == 1 && origin.requests.count == 1)
    }

    @Test("respond.file is read per request, typed by its extension; a vanished file is a 502 naming it")
    func mapLocalFile() throws {
        let path = try Self.temporaryFile("user.json", #"{"v": 1}"#)
        let origin = try OriginServer { _ in .text("origin") }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: file mock
                match: { host: "127.0.0.1", path: "/user" }
                respond: { file: "\(path)" }
            """)
        let client = try RawClient(port: proxy.port)
        let first = try client.request(RawClient.get(origin.url("/user")))
        #expect(first.status == 200 && first.text == #"{"v": 1}"#)
        #expect(first.header("content-type") == "application/json")
        try Data(#"{"v": 2, "edited": true}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try client.request(RawClient.get(origin.url("/user"))).text == #"{"v": 2, "edited": true}"#)
        try FileManager.default.removeItem(atPath: path)
        let gone = try client.request(RawClient.get(origin.url("/user")))
        #expect(gone.status == 502)
        #expect(gone.header("content-type") == "application/problem+json")
        #expect(gone.text.contains("map-local-failed"))
        #expect(gone.text.contains(path) && gone.text.contains("file mock"))
        #expect(origin.requests.isEmpty)
    }

    @Test("upstream sends the request to another origin, path prefixed; Host rewritten or kept")
    func mapRemote() throws {
        let origin = try OriginServer { request in
            .text("\(request.target) host=\(request.header("host") ?? "-")")
        }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: staging
                match: { host: "api.shop.test" }
                upstream: "http://127.0.0.1:\(origin.port)/staging/"
              - name: keep
                match: { host: "keep.shop.test" }
                upstream: { url: "http://127.0.0.1:\(origin.port)", host: keep }
            """)
        let client = try RawClient(port: proxy.port)
        let mapped = try client.request(RawClient.get("http://api.shop.test/v1/items?b=2&a=1"))
        #expect(mapped.status == 200)
        #expect(mapped.text == "/staging/v1/items?b=2&a=1 host=127.0.0.1:\(origin.port)")
        let kept = try client.request(RawClient.get("http://keep.shop.test:8080/x"))
        #expect(kept.text == "/x host=keep.shop.test:8080")
        #expect(proxy.logLines.all.contains { $0.contains("mapped=\"http://127.0.0.1:\(origin.port)/staging/\"") })
    }

    @Test("rewrite changes request fields on the way up and response fields before the cache")
    func rewrite() throws {
        let origin = try OriginServer { request in
            .respond(
                status: 200,
                headers: [
                    ("Cache-Control", "no-store"), ("X-Internal", "secret"), ("X-Seen", request.header("x-env") ?? "-"),
                    ("X-Cookie", request.header("cookie") ?? "-"),
                    (
                        "X-Tags",
                        request.fields.filter { $0.0.lowercased() == "x-tag" }.map(\.1).joined(separator: "|")
                    ),
                ],
                body: Array("body".utf8))
        }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: rewrite
                match: { path: "/r/**" }
                rewrite:
                  request: { set: { X-Env: staging }, add: { X-Tag: added }, remove: [Cookie] }
                  response:
                    set: { Cache-Control: "public, max-age=60" }
                    add: { X-Rewritten: "1" }
                    remove: [X-Internal]
            """)
        let client = try RawClient(port: proxy.port)
        let url = origin.url("/r/item")
        let first = try client.request(
            RawClient.get(url, extra: "X-Env: prod\r\nCookie: a=1\r\nX-Tag: client\r\n"))
        #expect(first.header("x-seen") == "staging")
        #expect(first.header("x-cookie") == "-")
        #expect(first.header("x-tags") == "client|added")
        #expect(first.header("x-internal") == nil)
        #expect(first.header("x-rewritten") == "1")
        #expect(first.header("cache-control") == "public, max-age=60")
        // The rewritten Cache-Control made it cacheable: the second request is a hit.
        let second = try client.request(RawClient.get(url))
        #expect(second.text == "body")
        #expect(second.header("cache-status")?.contains("hit") == true)
        #expect(origin.requests.count == 1)
    }

    @Test(
        "rewrite.response.json_patch: patched in place (the rest byte for byte), cached as the origin sent it, left alone when a test fails"
    )
    func jsonPatch() throws {
        let document = #"{ "user": {"id": 7, "name": "Ada",  "debug": {"trace": true}}, "flags": ["a"] }"#
        let origin = try OriginServer { request in
            .respond(
                status: 200,
                headers: [
                    ("Content-Type", request.target == "/text" ? "text/plain" : "application/json"),
                    ("Cache-Control", "max-age=60"), ("ETag", "\"e1\""),
                ],
                body: Array(document.utf8))
        }
        defer { origin.stop() }
        let proxy = try Self.proxy(
            """
            rules:
              - name: guard
                match: { path: "/guarded" }
                rewrite:
                  response:
                    json_patch:
                      - { op: test, path: /user/id, value: 8 }
                      - { op: remove, path: /user/debug }
              - name: patch
                match: { path: "/**" }
                rewrite:
                  response:
                    json_patch:
                      - { op: replace, path: /user/name, value: "Grace" }
                      - { op: remove, path: /user/debug }
                      - { op: add, path: /flags/-, value: { beta: true, rollout: 0.5 } }
                      - { op: add, path: /user/vip, value: true }
            """)
        let client = try RawClient(port: proxy.port)
        let expected =
            #"{ "user": {"id": 7, "name": "Grace","vip":true}, "flags": ["a","{"beta":true,"rollout":0.5}"] }"#
            .replacingOccurrences(of: #""{"beta":true,"rollout":0.5}""#, with: #"{"beta":true,"rollout":0.5}"#)
        let first = try client.request(RawClient.get(origin.url("/user")))
        #expect(first.text == expected)
        #expect(first.header("content-length") == String(expected.utf8.count))
        #expect(first.header("etag") == "W/\"e1\"")
        // The cache keeps the origin's bytes; the hit is patched again on its way out.
        let second = try client.request(RawClient.get(origin.url("/user")))
        #expect(second.header("cache-status")?.contains("hit") == true && second.text == expected)
        #expect(origin.requests.count == 1)
        let text = try client.request(RawClient.get(origin.url("/text")))
        #expect(text.text == document)
        let guarded = try client.request(RawClient.get(origin.url("/guarded")))
        #expect(guarded.text == document)
        #expect(
            guarded.header("sluice-validation")?.contains("json_patch not applied: operation 0: test failed") == true)
    }

    @Test("Inside intercepted HTTPS: map local, map remote to a plain origin, and an injected status")
    func intercepted() throws {
        let setup = try InterceptionTests.Setup()
        let secure = try HTTPSOrigin(authority: setup.originCA)
        defer { secure.stop() }
        let plain = try OriginServer { request in .text("plain origin saw \(request.target)") }
        defer { plain.stop() }
        let configuration = try setup.configuration(
            extraRule: """
                  - name: mock
                    match: { host: "localhost", path: "/mock" }
                    respond: { status: 200, headers: { Content-Type: application/json }, body: '{"mocked":true}' }
                  - name: to plain
                    match: { host: "localhost", path: "/remote/**" }
                    upstream: "http://127.0.0.1:\(plain.port)/base"
                  - name: flaky
                    match: { host: "localhost", path: "/flaky" }
                    faults: { status: { code: 429, retry_after: 2, rate: 1 } }
                """, connectPort: secure.port)
        let proxy = try ProxyHarness(configuration: configuration)
        let mock = try InterceptionTests.curl(secure.url("/mock"), proxy: proxy.port, cacert: setup.caCert)
        #expect(mock.exitCode == 0 && mock.status == 200 && mock.body == #"{"mocked":true}"#)
        let remote = try InterceptionTests.curl(secure.url("/remote/x?y=1"), proxy: proxy.port, cacert: setup.caCert)
        #expect(remote.status == 200 && remote.body == "plain origin saw /base/remote/x?y=1")
        let flaky = try InterceptionTests.curl(secure.url("/flaky"), proxy: proxy.port, cacert: setup.caCert)
        #expect(flaky.status == 429 && flaky.headers["retry-after"] == "2")
        #expect(secure.requests == 0)
    }

    @Test(
        "Bad mapping settings fail with their key path",
        arguments: [
            ("rules:\n  - match: {path: /a}\n    respond: {status: 99}", "rules[0].respond.status"),
            ("rules:\n  - match: {path: /a}\n    respond: {body: x, file: y}", "rules[0].respond.file"),
            ("rules:\n  - match: {path: /a}\n    respond: {status: 204, body: x}", "rules[0].respond.body"),
            (
                "rules:\n  - match: {path: /a}\n    respond: {headers: {Content-Length: '3'}}",
                "rules[0].respond.headers.Content-Length"
            ),
            ("rules:\n  - match: {path: /a}\n    respond: {bogus: 1}", "rules[0].respond.bogus"),
            ("rules:\n  - match: {path: /a}\n    upstream: 'ftp://x'", "rules[0].upstream"),
            ("rules:\n  - match: {path: /a}\n    upstream: 'http://x/?q=1'", "rules[0].upstream"),
            ("rules:\n  - match: {path: /a}\n    upstream: {host: keep}", "rules[0].upstream.url"),
            ("rules:\n  - match: {path: /a}\n    respond: {}\n    upstream: 'http://x'", "rules[0].upstream"),
            (
                "rules:\n  - match: {path: /a}\n    rewrite: {response: {set: {Transfer-Encoding: chunked}}}",
                "rules[0].rewrite.response"
            ),
            (
                "rules:\n  - match: {path: /a}\n    rewrite: {request: {remove: ['a b']}}",
                "rules[0].rewrite.request.remove"
            ),
            ("defaults:\n  respond: {body: x}", "defaults.respond"),
            (
                "rules:\n  - match: {path: /a}\n    rewrite: {response: {json_patch: [{op: frob, path: /a}]}}",
                "rules[0].rewrite.response.json_patch[0].op"
            ),
            (
                "rules:\n  - match: {path: /a}\n    rewrite: {response: {json_patch: [{op: add, path: a, value: 1}]}}",
                "rules[0].rewrite.response.json_patch[0].path"
            ),
            (
                "rules:\n  - match: {path: /a}\n    rewrite: {response: {json_patch: [{op: replace, path: /a}]}}",
                "rules[0].rewrite.response.json_patch[0].value"
            ),
            (
                "rules:\n  - match: {path: /a}\n    rewrite: {request: {json_patch: [{op: remove, path: /a}]}}",
                "rules[0].rewrite.request.json_patch"
            ),
        ])
    func badSettings(yaml: String, key: String) {
        #expect {
            try ConfigLoader.load(yaml: yaml)
        } throws: { error in
            (error as? ConfigError)?.key == key
        }
    }
}
