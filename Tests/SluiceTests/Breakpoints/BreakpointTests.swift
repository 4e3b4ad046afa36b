import Codec
import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// Breakpoints end to end: a real origin, real clients through the proxy (a raw HTTP/1.1 client
/// and curl), the admin API deciding what is paused.
@Suite("Breakpoints")
struct BreakpointTests {
    /// One admin call: status and JSON.
    static func admin(_ port: UInt16, _ method: String, _ path: String, _ body: String? = nil) throws -> (Int, Any?) {
        let client = try RawClient(port: port)
        let payload = body ?? ""
        let response = try client.request(
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(payload.utf8.count)\r\n\r\n\(payload)",
            method: method)
        return (response.status, try? JSONSerialization.jsonObject(with: Data(response.body)))
    }

    /// The paused items, once there are `count`.
    static func paused(_ port: UInt16, count: Int = 1) throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        _ = try eventually(timeout: 10) {
            items = (try admin(port, "GET", "/paused").1 as? [[String: Any]]) ?? []
            return items.count >= count
        }
        return items
    }

    /// A request sent on a thread of its own (it waits while paused); its answer when it comes.
    final class Pending: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<ReceivedResponse, any Error>?

        convenience init(proxy: UInt16, _ text: String, method: String = "GET") {
            self.init(proxy: proxy, bytes: Array(text.utf8), method: method)
        }

        init(proxy: UInt16, bytes: [UInt8], method: String = "GET") {
            Thread {
                do {
                    let client = try RawClient(port: proxy, timeout: 30)
                    try client.socket.send(bytes)
                    self.result = .success(try client.reader.readResponse(method: method))
                } catch {
                    self.result = .failure(error)
                }
                self.done.signal()
            }.start()
        }

        func response(timeout: Double = 20) throws -> ReceivedResponse {
            guard done.wait(timeout: .now() + timeout) == .success, let result else {
                throw CocoaError(.fileReadUnknown)
            }
            return try result.get()
        }
    }

    /// An intercepting proxy (with its admin port) in front of a WebSocket origin, pausing the
    /// client's messages at a breakpoint named "chat" with `conditions` besides; stop the origin.
    static func webSocketPauses(_ conditions: [String: Any] = [:]) throws -> (
        WebSocketTests.Setup, WebSocketOrigin, ProxyHarness, UInt16
    ) {
        let setup = try WebSocketTests.Setup()
        let origin = try WebSocketOrigin(certificate: setup.certificate, key: setup.key)
        do {
            var configuration = try setup.configuration(port: origin.port)
            let spec = conditions.merging(["stage": "messages", "direction": "send"]) { mine, _ in mine }
            configuration.breakpoints.points = [try Breakpoint.parse(spec, name: "chat").get()]
            let proxy = try ProxyHarness(configuration: configuration)
            return (setup, origin, proxy, try proxy.startAdmin())
        } catch {
            origin.stop()
            throw error
        }
    }

    static func configuration(_ specs: [[String: Any]], timeout: Int = 300_000) throws -> Configuration {
        var configuration = Configuration()
        configuration.breakpoints.timeout = timeout
        configuration.breakpoints.points = try specs.map { try Breakpoint.parse($0).get() }
        return configuration
    }

    @Test(
        "A request paused before it is sent: a field and the JSON body edited, the origin gets the edits with a correct Content-Length"
    )
    func requestEdited() throws {
        let origin = try OriginServer { request in .text("saw \(request.body.count)") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration([
                ["name": "orders", "match": ["path": "/orders", "methods": ["POST"]], "headers": ["X-Debug": "*"]]
            ]))
        let admin = try proxy.startAdmin()
        let body = #"{"qty":1}"#
        let pending = Pending(
            proxy: proxy.port,
            "POST \(origin.url("/orders")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nX-Debug: 1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
            method: "POST")
        let item = try #require(Self.paused(admin).first)
        #expect(origin.requests.isEmpty, "nothing reached the origin while paused")
        #expect(item["stage"] as? String == "request" && item["breakpoint"] as? String == "orders")
        let shown = try #require(item["request"] as? [String: Any])
        #expect(shown["body"] as? String == body && shown["method"] as? String == "POST")
        let id = try #require(item["id"] as? Int)
        // A bad edit is refused before anything is decided: the item stays paused.
        let (refused, why) = try Self.admin(admin, "POST", "/paused/\(id)/resume", #"{"headers": [["Bad Name", "x"]]}"#)
        #expect(refused == 400 && ((why as? [String: Any])?["error"] as? String ?? "").contains("not a field name"))
        #expect(try Self.admin(admin, "POST", "/paused/\(id)/resume", #"{"url": "ftp://x/"}"#).0 == 400)
        let huge = #"{"headers": [["X-Huge", "\#(String(repeating: "h", count: 70_000))"]]}"#
        let tooLarge = try Self.admin(admin, "POST", "/paused/\(id)/resume", huge)
        #expect(tooLarge.0 == 400 && "\(tooLarge.1 ?? "")".contains("limits.max_header_bytes"), "\(tooLarge)")
        #expect((try Self.admin(admin, "GET", "/paused").1 as? [Any])?.count == 1)
        let edit =
            #"{"headers": [["Host", "127.0.0.1:\#(origin.port)"], ["Content-Type", "application/json"], ["X-Edited", "yes"], ["Content-Length", "1"]], "body": "{\"qty\":25,\"note\":\"edited\"}"}"#
        let (status, _) = try Self.admin(admin, "POST", "/paused/\(id)/resume", edit)
        #expect(status == 200)
        let response = try pending.response()
        #expect(response.status == 200 && response.text == "saw 26", "\(response.text)")
        let seen = try #require(origin.requests.first)
        #expect(seen.header("x-edited") == "yes" && seen.header("content-length") == "26")
        #expect(
            seen.fields.filter { $0.0.lowercased() == "content-length" }.count == 1, "one framing line: \(seen.fields)")
        #expect(String(decoding: seen.body, as: UTF8.self) == #"{"qty":25,"note":"edited"}"#)
        #expect(try Self.admin(admin, "GET", "/paused").1 as? [Any] != nil)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("breakpoint=\"request paused at orders; edited, resumed\"") }
            },
            "\(proxy.logLines.all)")
    }

    @Test("A client that leaves while its request is paused takes the item with it: its slot is free again")
    func clientLeavesWhilePaused() throws {
        let origin = try OriginServer { _ in .text("ok") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration([["name": "all", "match": ["path": "/p/**"]]]))
        let admin = try proxy.startAdmin()
        let client = try RawClient(port: proxy.port)
        try client.send(RawClient.get(origin.url("/p/1")))
        #expect(try Self.paused(admin).count == 1)
        client.socket.close()
        #expect(
            try eventually(timeout: 5) { (try Self.admin(admin, "GET", "/paused").1 as? [Any])?.isEmpty == true },
            "the item of a client that left is gone")
        #expect(origin.requests.isEmpty, "nothing was sent for it")
    }

    /// Keeps how long each completed exchange was held at breakpoints.
    final class PausedTimes: EventMonitor, @unchecked Sendable {
        let times = Recorder()
        func exchangeDidComplete(_ record: ExchangeRecord) {
            times.add("\(record.paused.request) \(record.paused.response) \(record.duration)")
        }
    }

    @Test(
        "How long the request and the response were held is the exchange's (the page's HAR keeps it out of the origin's time)"
    )
    func pausedTime() throws {
        let origin = try OriginServer { _ in .text("ok") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration([["name": "both", "stage": "both"]]))
        let admin = try proxy.startAdmin()
        let monitor = PausedTimes()
        proxy.onLoop { server in server.session.eventMonitor.add(monitor) }
        let pending = Pending(proxy: proxy.port, RawClient.get(origin.url("/held")))
        for stage in ["request", "response"] {
            let item = try #require(Self.paused(admin).first { $0["stage"] as? String == stage })
            Thread.sleep(forTimeInterval: stage == "request" ? 0.3 : 0.6)  // the person looks at it
            #expect(try Self.admin(admin, "POST", "/paused/\(try #require(item["id"] as? Int))/resume").0 == 200)
        }
        #expect(try pending.response().text == "ok")
        #expect(proxy.waitUntil { monitor.times.all.count == 1 })
        let held = (monitor.times.all.first ?? "").split(separator: " ").compactMap { Double($0) }
        #expect(held.count == 3 && held[0] >= 0.3 && held[1] >= 0.6 && held[0] + held[1] <= held[2], "\(held)")
    }

    @Test("A response paused whole: its JSON edited, the client gets the edited body and a new Content-Length")
    func responseEdited() throws {
        let origin = try OriginServer { _ in
            .respond(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(#"{"id":7,"name":"Rex"}"#.utf8))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration([
                [
                    "name": "pets", "stage": "response", "status": [200], "media_type": "application/json",
                    "json": ["pointer": "/id", "equals": 7],
                ]
            ]))
        let admin = try proxy.startAdmin()
        let pending = Pending(
            proxy: proxy.port, "GET \(origin.url("/pets/7")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let item = try #require(Self.paused(admin).first)
        #expect(item["stage"] as? String == "response")
        #expect((item["response"] as? [String: Any])?["body"] as? String == #"{"id":7,"name":"Rex"}"#)
        let id = try #require(item["id"] as? Int)
        #expect(
            try Self.admin(
                admin, "POST", "/paused/\(id)/resume", #"{"status": 201, "body": "{\"id\":7,\"name\":\"Max\"}"}"#
            ).0 == 200)
        let response = try pending.response()
        #expect(response.status == 201)
        #expect(response.text == #"{"id":7,"name":"Max"}"#)
        #expect(response.header("content-length") == "21")
        // Another id does not fit the JSON condition: not paused.
        let other = try OriginServer { _ in
            .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"id":8}"#.utf8))
        }
        defer { other.stop() }
        let direct = try RawClient(port: proxy.port).request(
            "GET \(other.url("/pets/8")) HTTP/1.1\r\nHost: 127.0.0.1:\(other.port)\r\n\r\n")
        #expect(direct.text == #"{"id":8}"#)
    }

    @Test(
        "A gzip request body is matched and shown decoded; edited, it goes as written without Content-Encoding; untouched, as it came"
    )
    func compressedRequest() throws {
        let origin = try OriginServer { request in
            .text(
                "\(request.header("content-encoding") ?? "identity") \(String(decoding: request.body, as: UTF8.self))")
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration([
                ["name": "big", "match": ["methods": ["POST"]], "json": ["pointer": "/qty", "equals": 2]]
            ]))
        let admin = try proxy.startAdmin()
        func post(_ json: String) -> Pending {
            let gzipped = ContentCoding.gzip.encode(Array(json.utf8))
            let head =
                "POST \(origin.url("/orders")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: \(gzipped.count)\r\n\r\n"
            return Pending(proxy: proxy.port, bytes: Array(head.utf8) + gzipped, method: "POST")
        }
        // Not matching (qty 1): not paused, sent as it came.
        let passing = try post(#"{"qty":1}"#).response()
        #expect(passing.text.hasPrefix("gzip "), "\(passing.text)")
        let pending = post(#"{"qty":2}"#)
        let item = try #require(Self.paused(admin).first)
        let shown = try #require(item["request"] as? [String: Any])
        #expect(shown["decoded_from"] as? String == "gzip" && shown["body"] as? String == #"{"qty":2}"#, "\(shown)")
        let id = try #require(item["id"] as? Int)
        #expect(try Self.admin(admin, "POST", "/paused/\(id)/resume", #"{"body": "{\"qty\":3}"}"#).0 == 200)
        #expect(try pending.response().text == #"identity {"qty":3}"#)
        // Content-Encoding taken off, the body left: it goes decoded.
        let again = post(#"{"qty":2}"#)
        let second = try #require(Self.paused(admin).first)
        let secondID = try #require(second["id"] as? Int)
        let fields = ((second["request"] as? [String: Any])?["headers"] as? [[String]] ?? []).filter {
            $0.first?.lowercased() != "content-encoding"
        }
        let edit = String(decoding: try JSONSerialization.data(withJSONObject: ["headers": fields]), as: UTF8.self)
        #expect(try Self.admin(admin, "POST", "/paused/\(secondID)/resume", edit).0 == 200)
        #expect(try again.response().text == #"identity {"qty":2}"#)
    }

    @Test("A gzip response is matched and shown decoded; edited, it goes out as written, without Content-Encoding")
    func compressedResponse() throws {
        let json = Array(#"{"user":{"name":"Ada","role":"admin"}}"#.utf8)
        let origin = try OriginServer { _ in
            .respond(
                status: 200,
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("ETag", "\"v1\"")],
                body: ContentCoding.gzip.encode(json))
        }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration([
                ["name": "admins", "stage": "response", "json": ["pointer": "/user/role", "equals": "admin"]]
            ]))
        let admin = try proxy.startAdmin()
        let pending = Pending(
            proxy: proxy.port,
            "GET \(origin.url("/me")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nAccept-Encoding: gzip\r\n\r\n")
        let item = try #require(Self.paused(admin).first)
        let shown = try #require(item["response"] as? [String: Any])
        #expect(
            shown["decoded_from"] as? String == "gzip"
                && shown["body"] as? String == String(decoding: json, as: UTF8.self))
        let id = try #require(item["id"] as? Int)
        let fields = try JSONSerialization.data(withJSONObject: [
            "headers": shown["headers"] as? [[String]] ?? [], "body": #"{"user":{"name":"Ada","role":"viewer"}}"#,
        ])
        #expect(try Self.admin(admin, "POST", "/paused/\(id)/resume", String(decoding: fields, as: UTF8.self)).0 == 200)
        let response = try pending.response()
        #expect(response.text == #"{"user":{"name":"Ada","role":"viewer"}}"#)
        #expect(response.header("content-encoding") == nil && response.header("etag") == "W/\"v1\"")
    }

    @Test("Abort: a 502 breakpoint-aborted problem, or the connection closed without an answer")
    func abort() throws {
        let origin = try OriginServer { _ in .text("never") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration([["name": "all"]]))
        let admin = try proxy.startAdmin()
        let first = Pending(
            proxy: proxy.port, "GET \(origin.url("/a")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let one = try #require(Self.paused(admin).first?["id"] as? Int)
        #expect(try Self.admin(admin, "POST", "/paused/\(one)/abort").0 == 200)
        let answered = try first.response()
        #expect(answered.status == 502 && answered.header("content-type") == "application/problem+json")
        #expect(answered.text.contains("breakpoint-aborted") && answered.text.contains("all"))
        let second = Pending(
            proxy: proxy.port, "GET \(origin.url("/b")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let two = try #require(Self.paused(admin).first?["id"] as? Int)
        #expect(try Self.admin(admin, "POST", "/paused/\(two)/abort", #"{"close": true}"#).0 == 200)
        #expect(throws: (any Error).self) { try second.response() }
        #expect(origin.requests.isEmpty)
        // A decided item is gone.
        #expect(try Self.admin(admin, "POST", "/paused/\(two)/resume").0 == 404)
    }

    @Test(
        "A paused response aborted both ways (502, or the connection closed); a HEAD passes its length; the connection serves on"
    )
    func responseAbort() throws {
        let origin = try OriginServer { _ in .text(String(repeating: "x", count: 100)) }
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: try Self.configuration([["name": "answers", "stage": "response"]]))
        let admin = try proxy.startAdmin()
        let first = Pending(
            proxy: proxy.port, "GET \(origin.url("/one")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let one = try #require(Self.paused(admin).first?["id"] as? Int)
        #expect(try Self.admin(admin, "POST", "/paused/\(one)/abort").0 == 200)
        let problem = try first.response()
        #expect(problem.status == 502 && problem.text.contains("breakpoint-aborted"), "\(problem.text)")
        let second = Pending(
            proxy: proxy.port, "GET \(origin.url("/two")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let two = try #require(Self.paused(admin).first?["id"] as? Int)
        #expect(try Self.admin(admin, "POST", "/paused/\(two)/abort", #"{"close": true}"#).0 == 200)
        #expect(throws: (any Error).self) { try second.response() }
        let head = Pending(
            proxy: proxy.port, "HEAD \(origin.url("/three")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n",
            method: "HEAD")
        let three = try #require(Self.paused(admin).first?["id"] as? Int)
        #expect(try Self.admin(admin, "POST", "/paused/\(three)/resume", #"{"headers": {"X-Seen": "1"}}"#).0 == 200)
        let headAnswer = try head.response()
        #expect(
            headAnswer.status == 200 && headAnswer.header("content-length") == "100"
                && headAnswer.header("x-seen") == "1")
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("aborted, connection closed") } })
    }

    @Test("Answer without the origin; a paused item goes on unchanged after breakpoints.timeout")
    func answerAndTimeout() throws {
        let origin = try OriginServer { _ in .text("from the origin") }
        defer { origin.stop() }
        let proxy = try ProxyHarness(
            configuration: try Self.configuration(
                [["name": "mock", "match": ["path": "/mock"]], ["name": "slow", "match": ["path": "/slow"]]],
                timeout: 400))
        let admin = try proxy.startAdmin()
        let mocked = Pending(
            proxy: proxy.port, "GET \(origin.url("/mock")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        let id = try #require(Self.paused(admin).first?["id"] as? Int)
        #expect(
            try Self.admin(
                admin, "POST", "/paused/\(id)/answer",
                #"{"status": 418, "headers": {"X-Mock": "1"}, "body": "short and stout"}"#
            ).0 == 200)
        let answer = try mocked.response()
        #expect(answer.status == 418 && answer.text == "short and stout" && answer.header("x-mock") == "1")
        #expect(origin.requests.isEmpty)
        let started = Date()
        let slow = try RawClient(port: proxy.port, timeout: 10).request(
            "GET \(origin.url("/slow")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        #expect(slow.text == "from the origin")
        #expect(Date().timeIntervalSince(started) >= 0.4, "held until the timeout")
        #expect(
            proxy.waitUntil { proxy.logLines.all.contains { $0.contains("went on unchanged after 400 ms") } },
            "\(proxy.logLines.all)")
    }

    @Test(
        "The API: PUT, GET and DELETE /breakpoints/{name}; bad specs are 400 with what is wrong; curl through a live breakpoint"
    )
    func api() throws {
        let origin = try OriginServer { request in .text("hello \(request.header("x-added") ?? "-")") }
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let admin = try proxy.startAdmin()
        let (put, spec) = try Self.admin(
            admin, "PUT", "/breakpoints/live",
            #"{"stage": "request", "match": {"host": "127.0.0.1", "methods": ["get"]}}"#)
        #expect(put == 200 && (spec as? [String: Any])?["name"] as? String == "live")
        let listed = try Self.admin(admin, "GET", "/breakpoints").1 as? [String: Any]
        #expect((listed?["breakpoints"] as? [Any])?.count == 1 && listed?["timeout_ms"] as? Int == 300_000)
        for (body, why) in [
            (#"{"stage": "sideways"}"#, "request, response, both or messages"),
            (#"{"status": [200]}"#, "response conditions"),
            (#"{"match": {"path": ""}}"#, "bad glob"),
            (#"{"colour": "red"}"#, "unknown key"),
        ] {
            let (status, error) = try Self.admin(admin, "PUT", "/breakpoints/bad", body)
            #expect(status == 400 && ((error as? [String: Any])?["error"] as? String ?? "").contains(why), "\(body)")
        }
        let pending = Thread {
            _ = try? runProgram(
                "curl", ["-s", "-m", "20", "-x", "http://127.0.0.1:\(proxy.port)", origin.url("/hi")], dropErrors: true)
        }
        pending.start()
        let item = try #require(Self.paused(admin).first)
        let id = try #require(item["id"] as? Int)
        let headers = ((item["request"] as? [String: Any])?["headers"] as? [[String]] ?? []) + [["X-Added", "by-api"]]
        let edit = try JSONSerialization.data(withJSONObject: ["headers": headers])
        #expect(try Self.admin(admin, "POST", "/paused/\(id)/resume", String(decoding: edit, as: UTF8.self)).0 == 200)
        #expect(proxy.waitUntil(timeout: 10) { origin.requests.first?.header("x-added") == "by-api" })
        #expect(try Self.admin(admin, "DELETE", "/breakpoints/live").0 == 200)
        #expect(try Self.admin(admin, "DELETE", "/breakpoints/live").0 == 404)
        let after = try RawClient(port: proxy.port).request(
            "GET \(origin.url("/hi")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        #expect(after.text == "hello -", "no breakpoint: straight through")
    }

    @Test("An intercepted HTTP/2 request (curl --http2) paused at the request and the response, resumed both times")
    func http2() throws {
        let setup = try InterceptionTests.Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.breakpoints.points = [
            try Breakpoint.parse(["stage": "both", "match": ["path": "/nostore"]], name: "h2").get()
        ]
        let proxy = try ProxyHarness(configuration: configuration)
        let admin = try proxy.startAdmin()
        nonisolated(unsafe) var output = ""
        let client = Thread {
            output =
                (try? runProgram(
                    "curl",
                    [
                        "-s", "--http2", "-m", "20", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", setup.caCert,
                        "-w", "|%{http_version}", origin.url("/nostore"),
                    ], dropErrors: true
                ).output) ?? "failed"
        }
        client.start()
        let request = try #require(Self.paused(admin).first)
        #expect(request["stage"] as? String == "request")
        #expect(try Self.admin(admin, "POST", "/paused/\(request["id"] as? Int ?? 0)/resume").0 == 200)
        var response: [String: Any] = [:]
        _ = try eventually(timeout: 10) {
            response = (try Self.admin(admin, "GET", "/paused").1 as? [[String: Any]])?.first ?? [:]
            return response["stage"] as? String == "response"
        }
        #expect((response["response"] as? [String: Any])?["body"] as? String == "fresh every time")
        #expect(
            try Self.admin(
                admin, "POST", "/paused/\(response["id"] as? Int ?? 0)/resume", #"{"body": "changed on the way"}"#
            ).0
                == 200)
        _ = eventually(timeout: 10) { output.hasSuffix("|2") }
        #expect(output == "changed on the way|2", "\(output)")
    }

    @Test(
        "WebSocket messages from the client paused: one edited, one dropped, one injected ahead of another; the other direction flows meanwhile",
        .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
    func webSocketMessages() throws {
        let (setup, origin, proxy, admin) = try Self.webSocketPauses(["body_contains": "me"])
        defer { origin.stop() }
        nonisolated(unsafe) var result: (status: Int32, json: [String: Any]) = (-1, [:])
        let client = Thread {
            result =
                (try? WebSocketOrigin.client(
                    "pause", proxy: proxy.port, url: "wss://localhost:\(origin.port)/greet", caFile: setup.caCert))
                ?? result
        }
        client.start()
        func next(_ text: String) throws -> Int {
            var found: [String: Any] = [:]
            _ = try eventually(timeout: 15) {
                let items = (try Self.admin(admin, "GET", "/paused").1 as? [[String: Any]]) ?? []
                found = items.first { (($0["message"] as? [String: Any])?["body"] as? String) == text } ?? [:]
                return !found.isEmpty
            }
            let message = try #require(found["message"] as? [String: Any])
            #expect(found["stage"] as? String == "message" && message["direction"] as? String == "send")
            #expect(message["type"] as? String == "text")
            return try #require(found["id"] as? Int)
        }
        let edit = try next("edit me")
        // A text message must stay UTF-8 (RFC 6455 §8.1): refused, the item still paused.
        let notText = try Self.admin(admin, "POST", "/paused/\(edit)/resume", #"{"body_base64": "/w=="}"#)
        #expect(notText.0 == 400 && "\(notText.1 ?? "")".contains("UTF-8"), "\(notText)")
        #expect(try Self.admin(admin, "POST", "/paused/\(edit)/resume", #"{"body": "edited!"}"#).0 == 200)
        let drop = try next("drop me")
        #expect(try Self.admin(admin, "POST", "/paused/\(drop)/abort").0 == 200)
        let inject = try next("inject before me")
        #expect(try Self.admin(admin, "POST", "/paused/\(inject)/answer", #"{"body": "injected"}"#).0 == 200)
        _ = eventually(timeout: 15) { result.status != -1 }
        #expect(result.status == 0, "\(result.json)")
        #expect(result.json["greeting"] as? [String] == ["hello", "one two three"], "read while the send side waited")
        #expect(result.json["edited"] as? String == "edited!")
        #expect(result.json["after_drop"] as? String == "after", "the dropped message never reached the origin")
        #expect(result.json["injected"] as? [String] == ["injected", "inject before me"])
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains {
                    $0.contains("send message paused at chat; edited, sent") && $0.contains("dropped")
                        && $0.contains("injected")
                }
            }, "\(proxy.logLines.all)")
    }

    @Test(
        "A WebSocket client that leaves while its message is paused takes the item with it, and its connection ends",
        .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
    func webSocketClientLeaves() throws {
        let (setup, origin, proxy, admin) = try Self.webSocketPauses()
        defer { origin.stop() }
        let left = try WebSocketOrigin.client(
            "leave", proxy: proxy.port, url: "wss://localhost:\(origin.port)/echo", caFile: setup.caCert)
        #expect(left.status == 0, "\(left.json)")
        // (Before, its reading stopped while the message was held: the close went unseen, the
        // item stayed listed and the connection open until someone decided.)
        #expect(
            proxy.waitUntil { ((try? Self.admin(admin, "GET", "/paused").1 as? [Any]) ?? [1]).isEmpty },
            "the paused item left with its client")
        #expect(proxy.waitUntil { proxy.onLoop { $0.openConnections } == 0 })
    }

    @Test("A paused request whose URL is edited to another origin is reached as that origin's rule says (its CA)")
    func editedURLTakesItsRule() throws {
        let setup = try InterceptionTests.Setup()
        let secure = try HTTPSOrigin(authority: setup.originCA)
        defer { secure.stop() }
        let plain = try OriginServer { _ in .text("plain") }
        defer { plain.stop() }
        // Only the rule for localhost trusts the origin's CA; the defaults do not.
        var configuration = try ConfigLoader.load(
            yaml: """
                rules:
                  - name: secure
                    match: { host: "localhost" }
                    tls: { ca_file: \(setup.originCAPath) }
                """)
        configuration.breakpoints.points = [
            try Breakpoint.parse(["match": ["host": "127.0.0.1"]], name: "plain").get()
        ]
        let proxy = try ProxyHarness(configuration: configuration)
        let admin = try proxy.startAdmin()
        let pending = Pending(
            proxy: proxy.port, "GET \(plain.url("/x")) HTTP/1.1\r\nHost: 127.0.0.1:\(plain.port)\r\n\r\n")
        let id = try #require(try Self.paused(admin).first?["id"] as? Int)
        let edit = #"{"url": "https://localhost:\#(secure.port)/nostore"}"#
        #expect(try Self.admin(admin, "POST", "/paused/\(id)/resume", edit).0 == 200)
        let response = try pending.response()
        #expect(response.status == 200 && response.text == "fresh every time", "\(response.status) \(response.text)")
    }
}
