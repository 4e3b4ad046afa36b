import Sluice
import Testing

@Suite("RedirectState")
struct RedirectStateTests {
    static let base = TargetURL("http://a.example/dir/page?x=1")!

    static func request(_ method: String = "GET", body: UpstreamRequest.Body = .none) -> UpstreamRequest {
        UpstreamRequest(
            method: method, url: base,
            headers: HTTPFields([
                ("Authorization", "Bearer t"), ("Cookie", "c=1"), ("Content-Type", "text/plain"), ("X-Keep", "1"),
            ]),
            body: body)
    }

    static func redirect(_ status: Int, to location: String) -> ResponseHead {
        ResponseHead(status: status, headers: HTTPFields([("Location", location)]))
    }

    @Test(
        "Locations resolve against the current URL (RFC 3986 §5)",
        arguments: [
            ("/abs", "http://a.example/abs"), ("rel", "http://a.example/dir/rel"), ("../up", "http://a.example/up"),
            ("?q=2", "http://a.example/dir/page?q=2"), ("//b.example/p", "http://b.example/p"),
            ("https://c.example:8443/s", "https://c.example:8443/s"), ("./x/./y/../z#frag", "http://a.example/dir/x/z"),
            ("http://d.example/a/../b/./c?q=../r", "http://d.example/b/c?q=../r"),
            ("//e.example/x/..", "http://e.example/"),
        ])
    func resolve(location: String, expected: String) {
        #expect(RedirectState.resolve(location, against: Self.base)?.description == expected)
    }

    @Test(
        "Methods are rewritten per RFC 9110 §15.4",
        arguments: [
            (301, "POST", "GET"), (302, "POST", "GET"), (303, "POST", "GET"), (303, "PUT", "GET"),
            (303, "HEAD", "HEAD"),
            (307, "POST", "POST"), (308, "PUT", "PUT"), (301, "GET", "GET"), (302, "DELETE", "DELETE"),
        ])
    func methodRewrite(status: Int, method: String, expected: String) {
        let next = RedirectState.rewrite(Self.request(method), status: status, to: TargetURL("http://a.example/n")!)
        #expect(next.method == expected)
        if expected == "GET", method != "GET" { #expect(next.headers["content-type"] == nil) }
    }

    @Test("Credentials and cookies stay with their origin")
    func crossOrigin() {
        let same = RedirectState.rewrite(Self.request(), status: 302, to: TargetURL("http://a.example/other")!)
        #expect(same.headers["authorization"] == "Bearer t")
        let other = RedirectState.rewrite(Self.request(), status: 302, to: TargetURL("http://b.example/")!)
        #expect(other.headers["authorization"] == nil)
        #expect(other.headers["cookie"] == nil)
        #expect(other.headers["x-keep"] == "1")
        let otherPort = RedirectState.rewrite(Self.request(), status: 302, to: TargetURL("http://a.example:81/")!)
        #expect(otherPort.headers["authorization"] == nil)
        // A rule's client certificate is a credential of its origin too.
        var mutual = Self.request()
        mutual.trust = UpstreamTrust()
        mutual.trust?.clientCertificate = "/c.pem"
        mutual.trust?.clientKey = "/c.key"
        #expect(
            RedirectState.rewrite(mutual, status: 302, to: TargetURL("http://a.example/x")!).trust?.clientCertificate
                == "/c.pem")
        let away = RedirectState.rewrite(mutual, status: 302, to: TargetURL("http://b.example/")!)
        #expect(away.trust?.clientCertificate == nil && away.trust?.clientKey == nil)
    }

    @Test("The limit, cycles, downgrades and unusable Locations stop the chain")
    func stops() {
        var state = RedirectState(limit: 2, start: Self.base)
        var current = Self.request()
        for path in ["/1", "/2"] {
            guard
                case .success(let next) = state.next(
                    after: current, response: Self.redirect(302, to: path), bodyWasSent: false)
            else {
                Issue.record("refused \(path)")
                return
            }
            current = next
        }
        #expect(state.count == 2)
        #expect(
            state.next(after: current, response: Self.redirect(302, to: "/3"), bodyWasSent: false)
                == .failure(.redirectFailed(reason: .tooManyRedirects(limit: 2))))

        var cycle = RedirectState(limit: 5, start: Self.base)
        #expect(
            cycle.next(after: Self.request(), response: Self.redirect(301, to: "/dir/page?x=1"), bodyWasSent: false)
                == .failure(.redirectFailed(reason: .cycle(url: "http://a.example/dir/page?x=1"))))

        var secure = RedirectState(limit: 5, start: TargetURL("https://a.example/")!)
        var secureRequest = Self.request()
        secureRequest.url = TargetURL("https://a.example/")!
        #expect(
            secure.next(after: secureRequest, response: Self.redirect(302, to: "http://a.example/"), bodyWasSent: false)
                == .failure(.redirectFailed(reason: .insecureOrInvalid(location: "http://a.example/"))))

        var unusable = RedirectState(limit: 5, start: Self.base)
        #expect(
            unusable.next(after: Self.request(), response: Self.redirect(302, to: "ftp://x/"), bodyWasSent: false)
                == .failure(.redirectFailed(reason: .insecureOrInvalid(location: "ftp://x/"))))

        var streamed = RedirectState(limit: 5, start: Self.base)
        #expect(
            streamed.next(
                after: Self.request("POST", body: .streamed), response: Self.redirect(307, to: "/again"),
                bodyWasSent: true)
                == .failure(.redirectFailed(reason: .bodyNotReplayable(location: "http://a.example/again"))))
    }
}
