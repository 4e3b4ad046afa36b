import Foundation
import SluiceTestKit
import Testing

@testable import Sluice

/// Pins down which recorded exchange answers a replayed request, and how a miss names the closest one.
@Suite("Replay: matching a request to a recorded exchange, and the closest one on a miss")
struct ReplayMatchingTests {
    static let digestA = String(repeating: "ab", count: 32)

    /// A recorded exchange with a 7-byte request body of digest `digest`; `cut` keeps part of the response body.
    static func exchange(
        _ method: String, _ url: String, digest: String = ReplayMatchingTests.digestA, request: [(String, String)] = [],
        status: Int = 200, response: [(String, String)] = [], body: String = "ok", cut: Bool = false
    ) -> RecordedExchange {
        RecordedExchange(
            started: 0, duration: 0.1, wait: nil, method: method, url: url,
            requestHeaders: request.map { HTTPFields.Field(name: $0.0, value: $0.1) }, requestBody: [],
            requestBodySize: 7, requestBodyDigest: digest, status: status, reason: "",
            responseHeaders: response.map { HTTPFields.Field(name: $0.0, value: $0.1) }, responseBody: Array(body.utf8),
            responseBodySize: Int64(body.utf8.count) + (cut ? 100 : 0), source: "proxy")
    }

    static func book(_ exchanges: [RecordedExchange], matchHeaders: [String] = [], matchBody: Bool = true) throws
        -> (ReplayBook, String)
    {
        let path = TestScratch.root.appendingPathComponent("replay-\(UUID().uuidString)").path
        do { try Recording.openForWriting(path).append(exchanges) }
        var settings = Configuration.Replay()
        settings.matchHeaders = matchHeaders
        settings.matchBody = matchBody
        return (try ReplayBook(settings: settings, file: path), path)
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func ask(
        _ book: ReplayBook, _ method: String, _ url: String, digest: String? = ReplayMatchingTests.digestA,
        headers: [(String, String)] = [], parsed: Bool = true
    ) -> ReplayBook.Answer {
        let target = parsed ? TargetURL(url) : nil
        return book.answer(method: method, url: url, target: target, headers: HTTPFields(headers), bodyDigest: digest)
    }

    static func recorded(_ answer: ReplayBook.Answer) -> ReplayedResponse? {
        if case .recorded(let response) = answer { response } else { nil }
    }

    static func miss(_ answer: ReplayBook.Answer) -> ReplayMiss? {
        if case .miss(let miss) = answer { miss } else { nil }
    }

    @Test("Host case, default port and query order do not matter; the head loses framing and Sluice's fields")
    func matches() throws {
        let fields = [
            ("Content-Type", "application/json"), ("Content-Length", "999"), ("Transfer-Encoding", "chunked"),
            ("Cache-Status", "sluice; hit"), ("Sluice-Rule", "api"), ("Set-Cookie", RecordedExchange.redacted),
        ]
        let (book, path) = try Self.book([
            Self.exchange("GET", "http://api.example/items?a=1&b=2", response: fields, body: "[1]"),
            Self.exchange("POST", "http://api.example/items?a=1&b=2", body: "posted"),
        ])
        defer { Self.remove(path) }
        let response = try #require(Self.recorded(Self.ask(book, "GET", "http://API.example:80/items?b=2&a=1")))
        #expect(response.id == 1 && response.head.status == 200 && response.body == Array("[1]".utf8))
        let kept = response.head.headers.map { "\($0.name): \($0.value)" }
        // A redacted credential is not replayed (`Set-Cookie: [redacted]` is a nameless cookie).
        #expect(kept == ["Content-Type: application/json", "Content-Length: 3"], "the length is the body's")
        let unparsed = Self.ask(book, "POST", "http://api.example:80/items?b=2&a=1", parsed: false)
        #expect(Self.recorded(unparsed)?.body == Array("posted".utf8))
    }

    @Test("Repeats go in recorded order, then the last again; 204 gets no length, HEAD no body; a cut body misses")
    func repeats() throws {
        let (book, path) = try Self.book([
            Self.exchange("GET", "http://a.example/counter", body: "1"),
            Self.exchange("GET", "http://a.example/other", body: "x"),
            Self.exchange("GET", "http://a.example/counter", body: "2"),
            Self.exchange("DELETE", "http://a.example/counter", status: 204, body: ""),
            Self.exchange("HEAD", "http://a.example/counter", response: [("Content-Length", "5")], body: ""),
            Self.exchange("GET", "http://a.example/big", body: "part", cut: true),
        ])
        defer { Self.remove(path) }
        let bodies = (0..<4).map { _ in Self.recorded(Self.ask(book, "GET", "http://a.example/counter"))?.body }
        #expect(bodies == [[0x31], [0x32], [0x32], [0x32]])
        let deleted = try #require(Self.recorded(Self.ask(book, "DELETE", "http://a.example/counter")))
        #expect(deleted.head.status == 204 && deleted.head.headers["content-length"] == nil)
        let head = try #require(Self.recorded(Self.ask(book, "HEAD", "http://a.example/counter")))
        #expect(head.body.isEmpty && head.head.headers["content-length"] == "5", "the recorded length stays")
        let cut = try #require(Self.miss(Self.ask(book, "GET", "http://a.example/big")))
        #expect(cut.closest == "#6 GET http://a.example/big")
        #expect(cut.differences == ["its response body was recorded cut (record.max_body); it is not replayed"])
    }

    @Test("A different or unread body misses unless match_body is off; the match_headers fields must agree too")
    func bodiesAndHeaders() throws {
        let recordings = [Self.exchange("POST", "http://a.example/orders", body: "created")]
        let (book, path) = try Self.book(recordings)
        defer { Self.remove(path) }
        let different = try #require(Self.miss(Self.ask(book, "POST", "http://a.example/orders", digest: "other")))
        #expect(different.request == "POST http://a.example/orders")
        #expect(different.closest == "#1 POST http://a.example/orders")
        #expect(different.differences == ["body: recorded 7 bytes with SHA-256 abababababab…, got a different body"])
        let unread = Self.miss(Self.ask(book, "POST", "http://a.example/orders", digest: nil))
        #expect(unread?.differences == ["body: too large to match (over limits.max_transform_body)"])
        let (loose, loosePath) = try Self.book(recordings, matchBody: false)
        defer { Self.remove(loosePath) }
        #expect(Self.recorded(Self.ask(loose, "POST", "http://a.example/orders", digest: "other"))?.id == 1)
        let recorded = Self.exchange("GET", "http://a.example/", request: [("Accept-Language", "en")])
        let (strict, strictPath) = try Self.book([recorded], matchHeaders: ["accept-language"])
        defer { Self.remove(strictPath) }
        let english = Self.ask(strict, "GET", "http://a.example/", headers: [("ACCEPT-LANGUAGE", "en")])
        #expect(Self.recorded(english) != nil, "field names in any case")
        let french = Self.miss(Self.ask(strict, "GET", "http://a.example/", headers: [("Accept-Language", "fr")]))
        #expect(french?.differences == [#"header accept-language: recorded "en", got "fr""#])
        let none = Self.miss(Self.ask(strict, "GET", "http://a.example/"))
        #expect(none?.differences == [#"header accept-language: recorded "en", got none"#], "absent is a value too")
    }

    @Test("The closest recording weighs origin over path over method over query; every difference is listed")
    func closest() throws {
        let (book, path) = try Self.book([
            Self.exchange("GET", "http://api.example/items?page=1"), Self.exchange("POST", "http://api.example/orders"),
            Self.exchange("GET", "http://other.example/items?page=2"),
        ])
        defer { Self.remove(path) }
        func miss(_ method: String, _ url: String) throws -> ReplayMiss {
            try #require(Self.miss(Self.ask(book, method, url)))
        }
        let query = try miss("GET", "http://api.example/items?page=2")
        #expect(query.closest == "#1 GET http://api.example/items?page=1")
        #expect(query.differences == [#"query: recorded "page=1", got "page=2""#])
        #expect(try miss("POST", "http://api.example/items?page=1").differences == ["method: recorded GET, got POST"])
        #expect(try miss("GET", "http://api.example/item?page=1").differences == ["path: recorded /items, got /item"])
        let origin = try miss("GET", "https://other.example/items?page=2")
        #expect(origin.closest == "#3 GET http://other.example/items?page=2")
        #expect(origin.differences == ["origin: recorded http://other.example, got https://other.example"])
        let several = try miss("DELETE", "http://other.example/orders?x=1")
        #expect(several.closest == "#3 GET http://other.example/items?page=2")
        let expected = ["method: recorded GET, got DELETE", "path: recorded /items, got /orders"]
        #expect(several.differences == expected + [#"query: recorded "page=2", got "x=1""#])
        let (empty, emptyPath) = try Self.book([])
        defer { Self.remove(emptyPath) }
        let nothing = Self.miss(Self.ask(empty, "GET", "http://a.example/"))
        #expect(nothing?.closest == nil && nothing?.differences == ["the recording holds no exchanges"])
    }
}
