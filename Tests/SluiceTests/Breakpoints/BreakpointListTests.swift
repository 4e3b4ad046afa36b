import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// The paused list stays small whatever is paused: the page reads it every second.
@Suite("The paused list")
struct BreakpointListTests {
    @Test(
        "A paused body of megabytes: the list shows its first KiB and its size, GET /paused/{id} has it whole, an edit of megabytes is taken"
    )
    func largeBodiesAreCutInTheList() throws {
        let origin = try OriginServer { request in .text("saw \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try BreakpointTests.configuration([["name": "uploads", "match": ["path": "/up"]]]))
        let admin = try proxy.startAdmin()
        // Text of 3 MB whose 1,024th byte is inside a two-byte character: cut before it.
        let body = String(repeating: "a", count: 1023) + "é" + String(repeating: "b", count: 3_000_000)
        let size = body.utf8.count
        let pending = BreakpointTests.Pending(
            proxy: proxy.port,
            "POST \(origin.url("/up")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: \(size)\r\n\r\n\(body)",
            method: "POST")
        let listed = try #require(BreakpointTests.paused(admin).first)
        let shown = try #require(listed["request"] as? [String: Any])
        #expect(shown["body"] as? String == String(repeating: "a", count: 1023))
        #expect(shown["body_size"] as? Int == size)
        let id = try #require(listed["id"] as? Int)
        let whole = try #require(try BreakpointTests.admin(admin, "GET", "/paused/\(id)").1 as? [String: Any])
        let request = try #require(whole["request"] as? [String: Any])
        #expect((request["body"] as? String)?.utf8.count == size && request["body_size"] == nil)
        // An edit of megabytes is taken (the admin API reads up to twice max_transform_body).
        let edit = "{\"body\": \"\(String(repeating: "c", count: 2_000_000))\"}"
        #expect(try BreakpointTests.admin(admin, "POST", "/paused/\(id)/resume", edit).0 == 200)
        #expect(try pending.response().text == "saw 2000000")
    }
}
