import Foundation
import Testing

@testable import Sluice

/// A breakpoint's spec and its matching: pure functions of the request, the response and the body.
@Suite("Breakpoint matching")
struct BreakpointMatchTests {
    static func point(_ spec: [String: Any]) throws -> Breakpoint { try Breakpoint.parse(spec, name: "b").get() }

    @Test("Request conditions: host and path globs, methods, fields present or containing a value")
    func request() throws {
        let point = try Self.point([
            "match": ["host": "*.example.com", "path": "/v1/**", "methods": ["post"]],
            "headers": ["X-Debug": "*", "User-Agent": "curl"],
        ])
        let fields = HTTPFields([("X-Debug", "0"), ("User-Agent", "curl/7.88")])
        #expect(point.matchesRequest(method: "POST", host: "api.example.com", path: "/v1/orders?x=1", fields: fields))
        #expect(!point.matchesRequest(method: "GET", host: "api.example.com", path: "/v1/orders", fields: fields))
        #expect(!point.matchesRequest(method: "POST", host: "example.org", path: "/v1/orders", fields: fields))
        #expect(!point.matchesRequest(method: "POST", host: "api.example.com", path: "/v2/x", fields: fields))
        #expect(
            !point.matchesRequest(
                method: "POST", host: "api.example.com", path: "/v1/x", fields: HTTPFields([("User-Agent", "curl")])))
        #expect(
            !point.matchesRequest(
                method: "POST", host: "a.example.com", path: "/v1/x",
                fields: HTTPFields([("X-Debug", "1"), ("User-Agent", "wget")])))
    }

    @Test("Response conditions: status codes and classes, media types with a wildcard subtype")
    func response() throws {
        let point = try Self.point(["stage": "response", "status": [201, "5xx"], "media_type": "application/*"])
        func head(_ status: Int, _ type: String?) -> ResponseHead {
            ResponseHead(status: status, headers: HTTPFields(type.map { [("Content-Type", $0)] } ?? []))
        }
        #expect(point.matchesResponse(head(201, "application/json; charset=utf-8")))
        #expect(point.matchesResponse(head(503, "application/problem+json")))
        #expect(!point.matchesResponse(head(200, "application/json")))
        #expect(!point.matchesResponse(head(201, "text/html")))
        #expect(!point.matchesResponse(head(201, nil)))
        #expect(Breakpoint.status(404, fits: "4xx") && !Breakpoint.status(404, fits: "5xx"))
    }

    @Test("Body conditions: contained text; a JSON pointer's value (numbers, strings, nested, escaped)")
    func body() throws {
        let text = try Self.point(["body_contains": "needle"])
        #expect(text.readsBody && text.matchesBody(Array("hay needle hay".utf8)))
        #expect(!text.matchesBody(Array("hay".utf8)) && !text.matchesBody([]))
        let number = try Self.point(["json": ["pointer": "/user/ids/1", "equals": 7]])
        #expect(number.matchesBody(Array(#"{"user":{"ids":[3,7]}}"#.utf8)))
        #expect(!number.matchesBody(Array(#"{"user":{"ids":[7,3]}}"#.utf8)))
        #expect(!number.matchesBody(Array("not json".utf8)))
        let textValue = try Self.point(["json": ["pointer": "/a~1b", "equals": "x"]])
        #expect(textValue.matchesBody(Array(#"{"a/b":"x"}"#.utf8)))
        #expect(!textValue.matchesBody(Array(#"{"a/b":"y"}"#.utf8)))
        // YAML: a plain 7 is the number, a quoted "7" the text; mappings keep their types.
        let points = try ConfigLoader.load(
            yaml: """
                breakpoints:
                  points:
                    - {name: n, json: {pointer: /n, equals: 7}}
                    - {name: q, json: {pointer: /n, equals: "7"}}
                    - {name: o, json: {pointer: /o, equals: {a: 1, b: [true, null]}}}
                """
        ).breakpoints.points
        #expect(points[0].matchesBody(Array(#"{"n":7}"#.utf8)) && !points[0].matchesBody(Array(#"{"n":"7"}"#.utf8)))
        #expect(points[1].matchesBody(Array(#"{"n":"7"}"#.utf8)) && !points[1].matchesBody(Array(#"{"n":7}"#.utf8)))
        #expect(points[2].matchesBody(Array(#"{"o":{"b":[true,null],"a":1}}"#.utf8)))
        #expect(Breakpoint.resolve("/a/01", in: ["a": [1, 2]]) == nil, "no leading zeros in indices")
    }

    @Test("Bad specs say what is wrong; the spec written back reads back the same")
    func specs() throws {
        let failures: [([String: Any], String)] = [
            (["stage": "sideways"], "request, response, both or messages"),
            (["direction": "send"], "message conditions"),
            (["stage": "messages", "status": [200]], "response conditions"),
            (["status": [200]], "response conditions"),
            (["stage": "response", "status": [99]], "status holds codes"),
            (["match": ["host": "a/b"]], "bad glob"),
            (["json": ["pointer": "id", "equals": 1]], "json is"),
            (["colour": "red"], "unknown key"),
        ]
        for (spec, why) in failures {
            guard case .failure(let error) = Breakpoint.parse(spec, name: "b") else {
                Issue.record("\(spec) was accepted")
                continue
            }
            #expect(error.message.contains(why), "\(error.message)")
        }
        #expect((try? Breakpoint.parse([:], name: "has space").get()) == nil)
        let point = try Self.point([
            "stage": "both", "match": ["host": "api.example.com", "methods": ["GET"]], "headers": ["X-A": "*"],
            "status": ["2xx"], "body_contains": "x", "json": ["pointer": "/id", "equals": 7],
        ])
        let written = try #require(
            try JSONSerialization.jsonObject(with: Data(point.spec.json.utf8)) as? [String: Any])
        #expect(try Breakpoint.parse(written).get() == point)
    }
}

@Suite("Breakpoints from the configuration file, reloaded")
struct BreakpointReloadTests {
    @Test("A `both` breakpoint with response conditions pauses at the response alone; without them, at both")
    func bothStages() throws {
        let statusOnly = try BreakpointMatchTests.point(["stage": "both", "status": ["5xx"]])
        let plain = try BreakpointMatchTests.point(["stage": "both", "match": ["path": "/a"]])
        let book = BreakpointBook([statusOnly], timeoutMilliseconds: 1000, loop: nil, clock: { 0 }, logger: nil)
        func names(_ stage: PausedItem.Stage) -> [String] {
            book.candidates(for: stage, method: "GET", host: "h", path: "/a", fields: HTTPFields()).map(\.name)
        }
        #expect(names(.request).isEmpty && names(.response) == ["b"])
        book.put(plain)
        #expect(names(.request) == ["b"] && names(.response) == ["b"])
    }

    @Test(
        "A reload adds and replaces the file's points, drops the ones it no longer lists, keeps live ones, takes the timeout"
    )
    func reload() {
        func point(_ name: String, _ stage: Breakpoint.Stage = .request) -> Breakpoint {
            var point = Breakpoint(name: name)
            point.stage = stage
            return point
        }
        let book = BreakpointBook(
            [point("login"), point("orders")], timeoutMilliseconds: 300_000, loop: nil, clock: { 0 }, logger: nil)
        book.put(point("live"))  // added from the page
        var settings = Configuration.Breakpoints()
        settings.timeout = 5_000
        settings.points = [point("orders", .response), point("cart")]
        book.reload(settings)
        #expect(book.points.map(\.name).sorted() == ["cart", "live", "orders"])
        #expect(book.points.first { $0.name == "orders" }?.stage == .response)
        #expect(book.timeoutMilliseconds == 5_000)
        // A second reload compares with what the file said last, not at start.
        settings.points = [point("orders", .response)]
        book.reload(settings)
        #expect(book.points.map(\.name).sorted() == ["live", "orders"])
    }
}
