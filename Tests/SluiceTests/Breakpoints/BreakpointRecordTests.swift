import Foundation
import SQLite
import SluiceTestKit
import Testing

@testable import Sluice

/// Breakpoints and recordings: what a person did is kept with the exchange (the note, the request
/// as sent, the response as received), exported in HAR's `_sluice`, and replayed requests pause
/// like any other.
@Suite("Breakpoints in recordings and replays")
struct BreakpointRecordTests {
    static func temporaryPath(_ name: String) -> String {
        TestScratch.root.appendingPathComponent("\(UUID().uuidString)-\(name)").path
    }

    static func object(_ text: String?) -> [String: Any]? {
        text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("A recorded exchange keeps what a breakpoint did: the note, the request as sent, the response as received")
    func recorded() throws {
        let origin = try OriginServer { request in
            request.method == "POST"
                ? .text("saw \(request.body.count)")
                : .respond(
                    status: 200, headers: [("Content-Type", "application/json")],
                    body: Array(#"{"id":7,"name":"Rex"}"#.utf8))
        }
        defer { origin.stop() }
        let file = Self.temporaryPath("breakpoints.sluicerec")
        var configuration = try BreakpointTests.configuration([
            ["name": "orders", "match": ["path": "/orders", "methods": ["POST"]]],
            ["name": "pets", "stage": "response", "match": ["path": "/pets/*"]],
        ])
        configuration.record.file = file
        do {
            let proxy = try ProxyHarness(configuration: configuration)
            let admin = try proxy.startAdmin()
            let body = #"{"qty":1}"#
            let post = BreakpointTests.Pending(
                proxy: proxy.port,
                "POST \(origin.url("/orders")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
                method: "POST")
            let request = try #require(BreakpointTests.paused(admin).first?["id"] as? Int)
            let edit =
                #"{"headers": [["Host", "127.0.0.1:\#(origin.port)"], ["X-Edited", "yes"]], "body": "{\"qty\":25}"}"#
            #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(request)/resume", edit).0 == 200)
            #expect(try post.response().text == "saw 10")
            let get = BreakpointTests.Pending(
                proxy: proxy.port, "GET \(origin.url("/pets/7")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
            let response = try #require(BreakpointTests.paused(admin).first?["id"] as? Int)
            #expect(
                try BreakpointTests.admin(
                    admin, "POST", "/paused/\(response)/resume", #"{"body": "{\"id\":7,\"name\":\"Max\"}"}"#
                ).0 == 200)
            #expect(try get.response().text == #"{"id":7,"name":"Max"}"#)
            proxy.shutdown()
        }
        let exchanges = try Recording.open(file).exchanges()
        #expect(exchanges.count == 2)
        // The request: recorded as the client sent it; what went upstream is in `sent`.
        let posted = try #require(exchanges.first { $0.method == "POST" })
        #expect(posted.requestBody == Array(#"{"qty":1}"#.utf8))
        let sent = try #require(Self.object(posted.breakpoint))
        #expect(sent["note"] as? String == "request paused at orders; edited, resumed")
        let upstream = try #require(sent["sent"] as? [String: Any])
        #expect(upstream["body"] as? String == #"{"qty":25}"#)
        #expect((upstream["headers"] as? [[String]])?.contains(["X-Edited", "yes"]) == true)
        #expect(sent["received"] == nil)
        // The response: recorded as the client got it; what the origin sent is in `received`.
        let fetched = try #require(exchanges.first { $0.method == "GET" })
        #expect(fetched.responseBody == Array(#"{"id":7,"name":"Max"}"#.utf8))
        let received = try #require(Self.object(fetched.breakpoint))
        #expect(received["note"] as? String == "response paused at pets; edited, resumed")
        #expect((received["received"] as? [String: Any])?["body"] as? String == #"{"id":7,"name":"Rex"}"#)
        #expect((received["received"] as? [String: Any])?["status"] as? Int == 200)
        // HAR export: `_sluice.breakpoint` is the same object.
        let har = HAR.document(exchanges, creator: "test", version: "1")
        let document = try #require(Self.object(har))
        let entries = try #require((document["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let marks = entries.compactMap { ($0["_sluice"] as? [String: Any])?["breakpoint"] as? [String: Any] }
        #expect(marks.count == 2)
        #expect(marks.contains { ($0["note"] as? String)?.hasPrefix("request paused at orders") == true })
    }

    @Test("A version 1 recording is read as it is, and gains the breakpoint and trailer columns when written to")
    func versionOne() throws {
        let file = Self.temporaryPath("v1.sluicerec")
        do {
            let database = try Database(path: file)
            try database.execute("PRAGMA application_id=\(Recording.applicationID)")
            try database.execute(
                """
                CREATE TABLE exchanges (id INTEGER PRIMARY KEY, started REAL NOT NULL, duration REAL NOT NULL,
                  wait REAL, method TEXT NOT NULL, url TEXT NOT NULL, request_headers TEXT NOT NULL,
                  request_body BLOB NOT NULL, request_body_size INTEGER NOT NULL,
                  request_body_sha256 TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL,
                  response_headers TEXT NOT NULL, response_body BLOB NOT NULL,
                  response_body_size INTEGER NOT NULL, source TEXT NOT NULL, rule TEXT);
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                INSERT INTO exchanges VALUES (1, 1.0, 0.1, NULL, 'GET', 'http://a.test/x', '[]', x'', 0,
                  '\(RecordedExchange.emptyBodyDigest)', 200, 'OK', '[["Content-Type","text/plain"]]', x'6f6b', 2, 'proxy', NULL);
                """)
            try database.setUserVersion(1)
        }
        let old = try Recording.open(file).exchanges()
        #expect(old.count == 1 && old[0].responseBody == Array("ok".utf8) && old[0].breakpoint == nil)
        let writer = try Recording.openForWriting(file)
        var added = old[0]
        added.url = "http://a.test/y"
        added.breakpoint = #"{"note":"answered"}"#
        added.responseTrailers = [HTTPFields.Field(name: "grpc-status", value: "0")]
        try writer.append([added])
        let both = try Recording.open(file).exchanges()
        #expect(both.map(\.url) == ["http://a.test/x", "http://a.test/y"])
        #expect(both.map(\.breakpoint) == [nil, #"{"note":"answered"}"#])
        #expect(both.map(\.responseTrailers.count) == [0, 1])
        #expect(both[1].responseTrailers.first?.value == "0")
    }

    @Test(
        "A replayed request pauses at a request breakpoint: resumed, the recording answers; edited to a request it does not hold, replay.on_miss decides"
    )
    func replayed() throws {
        let file = Self.temporaryPath("replay.sluicerec")
        let recorded = RecordedExchange(
            started: 1, duration: 0.01, wait: nil, method: "GET", url: "http://127.0.0.1:9/a", requestHeaders: [],
            requestBody: [], requestBodySize: 0, requestBodyDigest: RecordedExchange.emptyBodyDigest, status: 200,
            reason: "OK", responseHeaders: [HTTPFields.Field(name: "Content-Type", value: "text/plain")],
            responseBody: Array("recorded a".utf8), responseBodySize: 10, source: "proxy")
        try Recording.openForWriting(file).append([recorded])
        var configuration = try BreakpointTests.configuration([["name": "a", "match": ["path": "/a"]]])
        configuration.replay.file = file
        configuration.replay.onMiss = .fail
        let proxy = try ProxyHarness(configuration: configuration)
        let admin = try proxy.startAdmin()
        let request = "GET http://127.0.0.1:9/a HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n"
        // Resumed unchanged: the recording answers (nothing listens on port 9).
        let first = BreakpointTests.Pending(proxy: proxy.port, request)
        let item = try #require(BreakpointTests.paused(admin).first)
        #expect(item["stage"] as? String == "request")
        let id = try #require(item["id"] as? Int)
        #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(id)/resume").0 == 200)
        let answered = try first.response()
        #expect(answered.status == 200 && answered.text == "recorded a")
        // Edited to a URL the recording does not hold: on_miss fail is a 504.
        let second = BreakpointTests.Pending(proxy: proxy.port, request)
        let again = try #require(BreakpointTests.paused(admin).first?["id"] as? Int)
        #expect(
            try BreakpointTests.admin(admin, "POST", "/paused/\(again)/resume", #"{"url": "http://127.0.0.1:9/b"}"#).0
                == 200)
        let missed = try second.response()
        #expect(missed.status == 504)
        #expect(missed.header("cache-status")?.contains("detail=replay") != true)
        // Edited in a field only: the recording still answers (it matches method, URL and body).
        let third = BreakpointTests.Pending(proxy: proxy.port, request)
        let once = try #require(BreakpointTests.paused(admin).first?["id"] as? Int)
        #expect(
            try BreakpointTests.admin(
                admin, "POST", "/paused/\(once)/resume", #"{"headers": [["Host", "127.0.0.1:9"], ["X-Edited", "1"]]}"#
            ).0 == 200)
        let matched = try third.response()
        #expect(matched.status == 200 && matched.text == "recorded a")
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("breakpoint=\"request paused at a; resumed\"") }
            })
    }
}
