import Testing

@testable import Sluice

@Suite("Rules and globs")
struct RulesTests {
    static func glob(_ text: String, _ kind: Glob.Kind) -> Glob { try! Glob.parse(text, kind: kind).get() }

    @Test(
        "Host globs",
        arguments: [
            ("api.example.com", "api.example.com", true), ("api.example.com", "API.Example.COM", true),
            ("*.example.com", "a.example.com", true), ("*.example.com", "a.b.example.com", true),
            ("*.example.com", "example.com", false), ("*.example.com", "evil-example.com", false),
            ("*", "anything", true), ("api?.test", "api1.test", true), ("api?.test", "api.test", false),
            ("127.0.0.1", "127.0.0.1", true),
        ])
    func hosts(pattern: String, host: String, expected: Bool) {
        #expect(Self.glob(pattern, .host).matches(host) == expected)
    }

    @Test(
        "Path globs",
        arguments: [
            ("/v1/**", "/v1/users/7", true), ("/v1/**", "/v1/", true), ("/v1/**", "/v1", true),
            ("/v1/**", "/v10/x", false), ("/v1/*", "/v1/users", true), ("/v1/*", "/v1/users/7", false),
            ("/items/*/detail", "/items/42/detail", true), ("/items/*/detail", "/items/4/2/detail", false),
            ("/**/x.json", "/x.json", true), ("/**/x.json", "/a/b/x.json", true), ("/**/x.json", "/a/bx.json", false),
            ("/a?c", "/abc", true), ("/a?c", "/a/c", false), ("/**", "/", true), ("*", "/anything", false),
            ("/V1/**", "/v1/x", false),
        ])
    func paths(pattern: String, path: String, expected: Bool) {
        #expect(Self.glob(pattern, .path).matches(path) == expected)
    }

    @Test("Bad globs are refused with a reason")
    func badGlobs() {
        for (text, kind) in [
            ("", Glob.Kind.path), ("/a[0-9]", .path), ("/a{b,c}", .path), ("/a**", .path), ("/***", .path),
            ("v1/**", .path), ("**.example.com", .host), ("a/b", .host), ("a b", .host),
        ] {
            #expect((try? Glob.parse(text, kind: kind).get()) == nil, "\(text)")
        }
        // A port on a rule's or a breakpoint's host pattern would never match (hosts are
        // compared without theirs): said.
        #expect(Glob.portRefusal("127.0.0.1:25210")?.message.contains("write 127.0.0.1, not 127.0.0.1:25210") == true)
        #expect(Glob.portRefusal("[::1]:8080") != nil && Glob.portRefusal("*.example.com:*") != nil)
        #expect(Glob.portRefusal("api.example.com") == nil && Glob.portRefusal("::1") == nil)
        #expect(throws: ConfigError.self) {
            try ConfigLoader.load(yaml: "rules:\n  - name: r\n    match: { host: \"localhost:8080\" }\n")
        }
    }

    @Test("Paths match with percent-encoded unreserved characters decoded; other escapes stay")
    func percentEncodedPaths() {
        var match = RuleMatch()
        match.path = Self.glob("/echo/x*", .path)
        #expect(match.matches(method: "GET", host: "a", path: "/echo/%78yz"))
        #expect(match.matches(method: "GET", host: "a", path: "/%65cho/x"))
        #expect(!match.matches(method: "GET", host: "a", path: "/echo%2Fx"))
        #expect(RuleMatch.decodingUnreserved("/a%2fb%7E%41%zz%4") == "/a%2fb~A%zz%4")
    }

    @Test("The first matching rule applies; defaults otherwise; methods filter")
    func firstMatch() {
        var api = Rule(name: "api")
        api.match.host = Self.glob("api.test", .host)
        api.match.path = Self.glob("/v1/**", .path)
        api.match.methods = ["GET"]
        var wide = Rule(name: "wide")
        wide.match.host = Self.glob("*.test", .host)
        let book = RuleBook(rules: [api, wide])
        #expect(book.rule(method: "GET", host: "api.test", path: "/v1/a").name == "api")
        #expect(book.rule(method: "POST", host: "api.test", path: "/v1/a").name == "wide")
        #expect(book.rule(method: "GET", host: "api.test", path: "/v2").name == "wide")
        #expect(book.rule(method: "GET", host: "other.org", path: "/v1/a").name == "defaults")
        #expect(book.match(method: "GET", host: "other.org", path: "/") == nil)
    }
}
