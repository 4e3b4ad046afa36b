import Testing

@testable import Sluice

@Suite("TargetURL")
struct RequestTargetTests {
    @Test(
        "The normalised text (the cache key): lower-case scheme and host, default port omitted",
        arguments: [
            ("http://Example.COM/a?b=C", "http://example.com/a?b=C"),
            ("http://example.com:80/", "http://example.com/"),
            ("http://example.com:8080/x", "http://example.com:8080/x"),
            ("http://h:1/", "http://h:1/"),
            ("http://h:65535/p", "http://h:65535/p"),
            ("https://h:443/", "https://h/"),
            ("https://h:80/", "https://h:80/"),
            ("http://[::1]:9/", "http://[::1]:9/"),
            ("http://h", "http://h/"),
            ("http://h:08080/x", "http://h:8080/x"),
            ("http://h:8080/x?q", "http://h:8080/x?q"),
        ])
    func normalisedText(input: String, expected: String) throws {
        let url = try #require(TargetURL(input))
        #expect(url.description == expected)
        #expect(TargetURL(url.description) == url)
        // A target already spelled as the normalised text is recognised (and used as it is).
        #expect(url.isSpelled(expected))
        #expect(url.isSpelled(input) == (input == expected))
        #expect(!url.isSpelled(expected + "x"))
        #expect(!url.isSpelled(String(expected.dropLast())))
    }

    @Test(
        "An absolute http(s) URL splits into a lower-case scheme and host, a port and a path with its query, without its fragment",
        arguments: [
            ("http://a.example/p?q=1", "http", "a.example", 80, "/p?q=1"),
            ("HTTPS://A.Example:8443/P", "https", "a.example", 8443, "/P"),
            ("http://a.example", "http", "a.example", 80, "/"),
            ("http://a.example?x", "http", "a.example", 80, "/?x"),
            ("http://a.example/p#frag ment", "http", "a.example", 80, "/p"),
            (
                "http://a.example/a/b/c/d/e/f/g/h/i/j/k?long=query&more=1#x", "http", "a.example", 80,
                "/a/b/c/d/e/f/g/h/i/j/k?long=query&more=1"
            ),
            ("http://[::1]:8080/x", "http", "[::1]", 8080, "/x"),
        ])
    func parses(text: String, scheme: String, host: String, port: Int, pathAndQuery: String) throws {
        let url = try #require(TargetURL(text))
        #expect(url.scheme == scheme)
        #expect(url.host == host)
        #expect(Int(url.port) == port)
        #expect(url.pathAndQuery == pathAndQuery)
    }

    @Test(
        "Userinfo, a bad port, no host, other schemes and a path with a space, a control byte, DEL or a byte past ASCII are refused",
        arguments: [
            "http://user@a.example/", "http://a.example:99999/", "http:///p", "ftp://a.example/",
            "http://a.example/p q", "http://a.example/long/path/with\u{01}control", "http://a.example/p\u{7F}",
            "http://a.example/caf\u{E9}", "http://a.example/0123456789abcdef0123456789\t",
        ])
    func refuses(text: String) {
        #expect(TargetURL(text) == nil)
    }

    @Test("A byte the path may not hold is refused wherever it sits, also after a fragment's start it is not looked at")
    func everyPlace() {
        for place in 0..<24 {
            var path = Array(repeating: Character("a"), count: 24)
            path[place] = " "
            #expect(TargetURL("http://h/" + String(path)) == nil, "space at \(place)")
            #expect(TargetURL("http://h/x#" + String(path)) != nil, "space at \(place) in the fragment")
        }
    }
}
