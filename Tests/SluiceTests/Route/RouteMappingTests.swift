import Testing

@testable import Sluice

/// Pins down map remote's URL rewriting, map local's media types and bodiless statuses, and header rewrites.
@Suite("Mapping: map remote URLs, map local answers, header rewrites")
struct RouteMappingTests {
    static func url(_ text: String) -> TargetURL { TargetURL(text)! }

    static func remote(_ target: String) -> MapRemote { MapRemote(target: url(target)) }

    @Test("The mapping's origin replaces the request's; its path, less a trailing slash, goes before path and query")
    func remoteWithPath() {
        let mapped = Self.remote("https://staging.example:8443/api/").map(Self.url("http://prod.example/v1/users?id=7"))
        #expect(mapped.description == "https://staging.example:8443/api/v1/users?id=7")
        #expect(mapped.scheme == "https" && mapped.host == "staging.example" && mapped.port == 8443)
        #expect(!mapped.hasEmptyPath)
        #expect(
            Self.remote("http://mock.local/api").map(Self.url("https://a.example/x?b=2&a=1")).description
                == "http://mock.local/api/x?b=2&a=1", "the query is passed as it came")
        #expect(Self.remote("http://mock.local:8080/api/").label == "http://mock.local:8080/api/")
        #expect(Self.remote("https://mock.local:443/api").label == "https://mock.local/api", "default port left out")
        #expect(!Self.remote("http://mock.local/").keepsHost, "Host is rewritten unless host: keep")
    }

    @Test("A mapping without a path, or with only /, keeps the request's path; an empty path stays empty only then")
    func remoteWithoutPath() {
        for target in ["http://mock.local", "http://mock.local/"] {
            let mapped = Self.remote(target).map(Self.url("http://a.example/v1?q=1"))
            #expect(mapped.description == "http://mock.local/v1?q=1", "target \(target)")
        }
        let bare = Self.remote("http://mock.local").map(Self.url("http://a.example"))
        #expect(bare.pathAndQuery == "/" && bare.hasEmptyPath, "OPTIONS for the server stays OPTIONS *")
        #expect(!Self.remote("http://mock.local").map(Self.url("http://a.example/")).hasEmptyPath)
        let prefixed = Self.remote("http://mock.local/api").map(Self.url("http://a.example"))
        #expect(prefixed.pathAndQuery == "/api/" && !prefixed.hasEmptyPath)
    }

    @Test("A respond block answers 200 with empty text by default; only 204 and 304 are bodiless")
    func localDefaults() {
        let answer = MapLocal()
        #expect(answer.status == 200)
        #expect(answer.headers.count == 0)
        #expect(answer.body == .text(""))
        #expect(MapLocal.isBodiless(204) && MapLocal.isBodiless(304))
        for status in [200, 201, 302, 404, 500] { #expect(!MapLocal.isBodiless(status), "\(status)") }
    }

    @Test(
        "A respond file is typed by its last extension, ignoring case; no extension or an unknown one is octet-stream",
        arguments: [
            ("/srv/mock/users.json", "application/json"),
            ("page.HTM", "text/html; charset=utf-8"),
            ("notes.text", "text/plain; charset=utf-8"),
            ("/srv/app.mjs", "text/javascript; charset=utf-8"),
            ("logo.svg", "image/svg+xml"),
            ("photo.JPEG", "image/jpeg"),
            ("module.wasm", "application/wasm"),
            ("/srv/archive.tar.gz", "application/octet-stream"),
            ("/srv/.env", "application/octet-stream"),
            ("/srv/v1.json/data", "application/octet-stream"),
            ("/srv/README", "application/octet-stream"),
            ("trailing.", "application/octet-stream"),
        ])
    func mediaTypes(path: String, expected: String) {
        #expect(MapLocal.mediaType(forFile: path) == expected)
    }

    @Test("A header rewrite removes, then sets (one line per name, keeping its place), then adds")
    func rewriteOrder() {
        var rewrite = HeaderRewrite()
        #expect(rewrite.isEmpty)
        rewrite.removing = ["cookie", "X-Debug"]
        rewrite.replacing = HTTPFields([("X-Debug", "on"), ("User-Agent", "sluice-test"), ("X-Tag", "set")])
        rewrite.adding = HTTPFields([("X-Tag", "added")])
        #expect(!rewrite.isEmpty)
        var fields = HTTPFields([
            ("Host", "a"), ("user-agent", "curl"), ("Cookie", "s=1"), ("X-Debug", "off"), ("X-Tag", "a"),
            ("COOKIE", "t=2"), ("x-tag", "a2"),
        ])
        rewrite.apply(to: &fields)
        #expect(
            fields.map { "\($0.name): \($0.value)" } == [
                "Host: a", "user-agent: sluice-test", "X-Tag: set", "X-Debug: on", "X-Tag: added",
            ])
    }

    @Test("Framing and hop-by-hop fields are reserved to Sluice; end-to-end fields may be rewritten")
    func reserved() {
        for name in [
            "Content-Length", "content-length", "Transfer-Encoding", "Connection", "TE", "Upgrade",
            "Keep-Alive", "Proxy-Authorization",
        ] {
            #expect(HeaderRewrite.isReserved(name), "\(name)")
        }
        for name in ["Content-Type", "Cache-Control", "Authorization", "Host", "X-Content-Length"] {
            #expect(!HeaderRewrite.isReserved(name), "\(name)")
        }
    }
}
