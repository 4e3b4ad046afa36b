import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// `POST /compose`: a request written in the page (or by a script) goes through Sluice's own path
/// as a new exchange; the answers come back, and the exchanges show like any other.
@Suite("Compose and resend")
struct ComposeTests {
    static func compose(_ admin: UInt16, _ draft: String, token: String? = nil) throws -> ReceivedResponse {
        let client = try RawClient(port: admin)
        let auth = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        return try client.request(
            "POST /compose HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(draft.utf8.count)\r\n\r\n\(draft)",
            method: "POST")
    }

    static func results(_ response: ReceivedResponse) -> [[String: Any]] {
        ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any])?["results"]
            as? [[String: Any]] ?? []
    }

    @Test(
        "A draft reaches the origin as written (method, fields, body); the answer comes back; it is logged as composed")
    func draftReachesTheOrigin() throws {
        let origin = try OriginServer { request in
            .text("got \(request.method) \(request.target) \(request.header("x-trace") ?? "-") \(request.body.count)")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let draft =
            #"{"method": "POST", "url": "\#(origin.url("/orders?x=1"))", "headers": [["X-Trace", "abc"], ["Content-Type", "application/json"]], "body": "{\"qty\": 2}"}"#
        let response = try Self.compose(admin, draft)
        #expect(response.status == 200, "\(response.text)")
        let result = try #require(Self.results(response).first)
        #expect(result["status"] as? Int == 200)
        #expect(result["body"] as? String == "got POST /orders?x=1 abc 10")
        #expect(result["body_size"] as? Int == 27)
        let request = try #require(origin.requests.first)
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("via") == "1.1 sluice")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"qty": 2}"#)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("composed \"POST \(origin.url("/orders?x=1"))\" 200") }
            }, "\(proxy.logLines.all)")
    }

    @Test("Resend ×N: N exchanges in a row through the cache; each has its own id")
    func resendTimes() throws {
        let origin = try OriginServer { _ in .text("cached", headers: [("Cache-Control", "max-age=60")]) }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let response = try Self.compose(admin, #"{"url": "\#(origin.url("/c"))", "repeat": 3}"#)
        let results = Self.results(response)
        #expect(results.count == 3)
        #expect(Set(results.compactMap { $0["id"] as? Int }).count == 3)
        let statuses = results.map { result -> String in
            let fields = result["headers"] as? [[String]] ?? []
            return fields.first { $0.first?.lowercased() == "cache-status" }?.last ?? ""
        }
        #expect(
            statuses[0].contains("stored") && statuses[1].contains("hit") && statuses[2].contains("hit"), "\(statuses)")
        #expect(origin.requests.count == 1)
    }

    @Test("A caller that leaves while its composed request is paused takes it with it; no other repeat starts")
    func callerLeavesWhilePaused() throws {
        let origin = try OriginServer { _ in .text("ok") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try BreakpointTests.configuration([["name": "all", "match": ["path": "/held"]]]))
        let admin = try proxy.startAdmin()
        let draft = #"{"url": "\#(origin.url("/held"))", "repeat": 5}"#
        let caller = try RawClient(port: admin)
        try caller.send(
            "POST /compose HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Length: \(draft.utf8.count)\r\n\r\n\(draft)")
        let first = try #require(BreakpointTests.paused(admin).first)
        #expect(first["stage"] as? String == "request")
        caller.socket.close()
        #expect(
            eventually { ((try? BreakpointTests.admin(admin, "GET", "/paused").1 as? [Any]) ?? [1]).isEmpty },
            "the paused repeat left with its caller")
        // And stays empty: the next repeat never starts.
        #expect(
            settled(quiet: 0.5) { ((try? BreakpointTests.admin(admin, "GET", "/paused").1 as? [Any]) ?? []).count } == 0
        )
        #expect(origin.requests.isEmpty)
    }

    @Test("Bad drafts are 400 with what is wrong; with admin.token, composing needs it")
    func refusals() throws {
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin(token: "s3cret")
        let cases = [
            ("not json", "JSON object"),
            (#"{"method": "GET"}"#, "needs a url"),
            (#"{"url": "ftp://example.com/"}"#, "absolute http://"),
            (#"{"url": "http://example.com/", "headers": [["Bad Name", "x"]]}"#, "not a token"),
            (#"{"url": "http://example.com/", "headers": [["X", "a\r\nInjected: 1"]]}"#, "CR, LF or NUL"),
            (#"{"url": "http://example.com/", "repeat": 500}"#, "repeat is 1 to 100"),
            (#"{"url": "http://example.com/", "header": [["X-Wanted", "1"]]}"#, "unknown key header"),
            // A value of another type is said, never taken as absent.
            (#"{"url": "http://example.com/", "body": {"qty": 2}}"#, "body is text"),
            (#"{"url": "http://example.com/", "repeat": "3"}"#, "repeat is a whole number"),
            (#"{"url": "http://example.com/", "method": 5}"#, "method is text"),
        ]
        for (draft, words) in cases {
            let response = try Self.compose(admin, draft, token: "s3cret")
            #expect(response.status == 400, "\(draft)")
            #expect(response.text.contains(words), "\(draft): \(response.text)")
        }
        #expect(try Self.compose(admin, #"{"url": "http://example.com/"}"#).status == 401)
    }

    @Test("The request text: absolute form, Host from the URL, Sluice's own Content-Length, framing fields dropped")
    func requestText() throws {
        let draft = ComposedRequest.Draft(
            method: "PUT", url: "http://api.example:8080/v1/x",
            headers: [("Content-Length", "999"), ("Transfer-Encoding", "chunked"), ("Accept", "*/*")],
            body: Array("abc".utf8))
        let text = try String(decoding: draft.requestText().get(), as: UTF8.self)
        #expect(
            text
                == "PUT http://api.example:8080/v1/x HTTP/1.1\r\nAccept: */*\r\nHost: api.example:8080\r\nContent-Length: 3\r\n\r\nabc"
        )
    }
}
