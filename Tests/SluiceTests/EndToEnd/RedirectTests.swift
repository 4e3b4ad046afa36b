import Foundation
import Sluice
import SluiceTestKit
import Testing

@Suite("Redirect policies: pass, follow, refuse")
struct RedirectTests {
    /// An origin with redirect chains, cycles and method-rewriting redirects.
    static func makeOrigin() throws -> OriginServer {
        try OriginServer { request in
            let path = request.target
            if path.hasPrefix("/chain/") {
                let remaining = Int(path.dropFirst("/chain/".count)) ?? 0
                if remaining == 0 { return .text("final \(request.method) body=\(request.body.count)") }
                return .respond(
                    status: 302, headers: [("Location", "/chain/\(remaining - 1)")], body: Array("moved".utf8))
            }
            switch path {
            case "/cycle/a": return .respond(status: 301, headers: [("Location", "/cycle/b")], body: [])
            case "/cycle/b":
                return .respond(
                    status: 301,
                    headers: [
                        ("Location", "http://127.0.0.1:\(request.header("host")!.split(separator: ":")[1])/cycle/a")
                    ], body: [])
            case "/see-other": return .respond(status: 303, headers: [("Location", "/target")], body: [])
            case "/temporary": return .respond(status: 307, headers: [("Location", "/target")], body: [])
            case "/target":
                return .text(
                    "target \(request.method) body=\(request.body.count) auth=\(request.header("authorization") ?? "-")"
                )
            default: return .text("other")
            }
        }
    }

    @Test("pass (the default): the client receives the 3xx as sent")
    func passPolicy() throws {
        let origin = try Self.makeOrigin()
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/chain/2")))
        #expect(response.status == 302)
        #expect(response.header("location") == "/chain/1")
        #expect(response.text == "moved")
        #expect(origin.requests.count == 1)
    }

    @Test("follow: the chain is followed to the final response on reused connections")
    func followPolicy() throws {
        let origin = try Self.makeOrigin()
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.redirects.policy = .follow
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/chain/4")))
        #expect(response.status == 200)
        #expect(response.text == "final GET body=0")
        #expect(origin.requests.map(\.target) == ["/chain/4", "/chain/3", "/chain/2", "/chain/1", "/chain/0"])
        #expect(origin.connectionCount == 1)
    }

    @Test("follow: more than the limit is 502 too-many-redirects, a cycle is 502 redirect-cycle")
    func followLimits() throws {
        let origin = try Self.makeOrigin()
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.redirects.policy = .follow
        configuration.redirects.limit = 3
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let tooMany = try client.request(RawClient.get(origin.url("/chain/4")))
        #expect(tooMany.status == 502)
        #expect(ErrorTests.problemType(tooMany) == "too-many-redirects")
        let cycle = try client.request(RawClient.get(origin.url("/cycle/a")))
        #expect(cycle.status == 502)
        #expect(ErrorTests.problemType(cycle) == "redirect-cycle")
    }

    @Test("follow: 303 after POST becomes GET without a body; 307 with a streamed body is passed back")
    func methodRewrite() throws {
        let origin = try Self.makeOrigin()
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.redirects.policy = .follow
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let seeOther = try client.request(
            "POST \(origin.url("/see-other")) HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Type: text/plain\r\n\r\nbody"
        )
        #expect(seeOther.text == "target GET body=0 auth=-")
        #expect(origin.requests.last?.header("content-type") == nil)
        let temporary = try client.request(
            "POST \(origin.url("/temporary")) HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody")
        #expect(temporary.status == 307)
    }

    @Test("follow: credentials are not sent to another origin")
    func crossOriginCredentials() throws {
        let target = try Self.makeOrigin()
        defer { target.stop() }
        let source = try OriginServer { _ in
            .respond(status: 302, headers: [("Location", target.url("/target"))], body: [])
        }
        defer { source.stop() }
        var configuration = Configuration()
        configuration.redirects.policy = .follow
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(
            RawClient.get(source.url("/go"), extra: "Authorization: Bearer secret\r\nCookie: a=b\r\n"))
        #expect(response.text == "target GET body=0 auth=-")
        #expect(target.requests.last?.header("cookie") == nil)
        #expect(source.requests.last?.header("authorization") == "Bearer secret")
    }

    @Test("refuse: a redirect becomes 502 redirect-refused")
    func refusePolicy() throws {
        let origin = try Self.makeOrigin()
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.redirects.policy = .refuse
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        let response = try client.request(RawClient.get(origin.url("/chain/1")))
        #expect(response.status == 502)
        #expect(ErrorTests.problemType(response) == "redirect-refused")
        // A 304 or a non-redirect is not affected.
        #expect(try client.request(RawClient.get(origin.url("/chain/0"))).status == 200)
    }
}
