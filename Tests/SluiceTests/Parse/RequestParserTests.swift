import Testing

@testable import Sluice

@Suite("RequestParser")
struct RequestParserTests {
    static func parse(_ text: String, limits: RequestParser.Limits = .init()) -> RequestParser.Outcome {
        var parser = RequestParser(limits: limits)
        return Array(text.utf8).withUnsafeBytes { parser.parse($0) }
    }

    static func head(_ text: String) throws -> ProxyRequest {
        guard case .head(let request, _) = parse(text) else { throw ParseFailure(outcome: parse(text)) }
        return request
    }

    struct ParseFailure: Error { let outcome: RequestParser.Outcome }

    @Test("A refused head's log names its request line only when one arrived whole and well-formed")
    func requestLineForTheLog() {
        func line(_ text: String, limit: Int = 8192) -> String? {
            Array(text.utf8).withUnsafeBytes { RequestParser.requestLine(in: $0, limit: limit) }.map {
                "\($0.method) \($0.target)"
            }
        }
        #expect(line("POST http://h/up HTTP/1.1\r\nContent-Length: 5000\r\n") == "POST http://h/up")
        #expect(line("\r\n\r\nGET http://h/ HTTP/1.1\r\n") == "GET http://h/")
        #expect(line("GET http://h/ HTTP/1.1") == nil)  // not whole yet
        #expect(line("GET http://h/\u{7}x HTTP/1.1\r\n") == nil)  // a control byte stays out of logs
        #expect(line("G(T http://h/ HTTP/1.1\r\n") == nil)
        #expect(line("GET  HTTP/1.1\r\n") == nil)
        #expect(line("GET http://h/\(String(repeating: "a", count: 100)) HTTP/1.1\r\n", limit: 50) == nil)
        // Credentials and fragments, which the parser refuses, stay out of the log.
        #expect(line("GET http://user:s3cret@h/x?q=1 HTTP/1.1\r\n") == "GET http://h/x?q=1")
        #expect(line("GET http://a@b@h:8080 HTTP/1.1\r\n") == "GET http://h:8080")
        #expect(line("GET http://h/cb#access_token=abc HTTP/1.1\r\n") == "GET http://h/cb")
        #expect(line("GET /p?next=u@h HTTP/1.1\r\n") == "GET /p?next=u@h")
    }

    @Test(
        "A Host that repeats the target's authority is taken as it is; any other is parsed",
        arguments: [
            "GET http://127.0.0.1:24080/x HTTP/1.1\r\nHost: 127.0.0.1:24080\r\n\r\n",
            "GET http://h?q=1 HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET http://h HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET https://[::1]:8443/ HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n",
            "GET http://h:8080/ HTTP/1.1\r\nHost: H:8080\r\n\r\n",
            "GET http://h/ HTTP/1.1\r\nHost: other.example:81\r\n\r\n",
        ])
    func hostRepeatingTarget(text: String) throws {
        _ = try Self.head(text)
    }

    @Test("A field value that is not UTF-8 is kept as received (RFC 9110 §5.5), not refused")
    func opaqueValue() throws {
        var parser = RequestParser(limits: .init())
        let bytes = Array("GET http://h/ HTTP/1.1\r\nHost: h\r\nX-Name: na".utf8) + [0xEF] + Array("ve\r\n\r\n".utf8)
        guard case .head(let request, _) = bytes.withUnsafeBytes({ parser.parse($0) }) else {
            Issue.record("not parsed")
            return
        }
        #expect(request.headers.fields.last?.opaque == true)
        #expect(request.headers["x-name"] == "na\u{ef}ve")
        // Control bytes stay refused.
        guard case .failure = Self.parse("GET http://h/ HTTP/1.1\r\nHost: h\r\nX: a\u{1}b\r\n\r\n") else {
            Issue.record("a control byte was accepted")
            return
        }
    }

    @Test("An absolute-form GET parses into method, URL, version and fields")
    func absoluteForm() throws {
        let request = try Self.head(
            "GET http://Example.COM:8080/a/b?q=1 HTTP/1.1\r\nHost: example.com\r\nX-A:  v  \r\n\r\n")
        #expect(request.method == "GET")
        #expect(
            request.target
                == .absolute(TargetURL(scheme: "http", host: "example.com", port: 8080, pathAndQuery: "/a/b?q=1")))
        #expect(request.minorVersion == 1)
        #expect(request.headers["x-a"] == "v")
        #expect(request.bodyFraming == .none)
    }

    @Test(
        "Target forms are classified",
        arguments: [
            (
                "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                RequestTarget.authority(host: "example.com", port: 443)
            ),
            ("GET /path HTTP/1.1\r\nHost: h\r\n\r\n", .origin("/path")),
            ("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", .asterisk),
            (
                "GET http://h HTTP/1.1\r\nHost: h\r\n\r\n",
                .absolute(TargetURL(scheme: "http", host: "h", port: 80, pathAndQuery: "/"))
            ),
            (
                "GET https://[::1]:8443?x HTTP/1.1\r\nHost: h\r\n\r\n",
                .absolute(TargetURL(scheme: "https", host: "[::1]", port: 8443, pathAndQuery: "/?x"))
            ),
        ])
    func targetForms(text: String, target: RequestTarget) throws {
        #expect(try Self.head(text).target == target)
    }

    @Test(
        "Framing violations and bad syntax are rejected with the right status",
        arguments: [
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            // A Kelvin sign is not a k: tokens compare in ASCII only.
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chun\u{212A}ed\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h:x\r\n\r\n", 400),
            ("GET http://h:8080/ HTTP/1.1\r\nHost: h:8080x\r\n\r\n", 400),
            ("GET http://u@h/ HTTP/1.1\r\nHost: u@h\r\n\r\n", 400),
            ("GET http://example.com/a HTTP/1.1\r\nHost: example.com/a\r\n\r\n", 400),
            ("GET http://example.com/ HTTP/1.1\r\nHost: example.com/\r\n\r\n", 400),
            ("GET http://a.com?x HTTP/1.1\r\nHost: a.com?x\r\n\r\n", 400),
            ("GET http://h/ HTTP/2.0\r\nHost: h\r\n\r\n", 505),
            ("GET http://h/ HTTP/1.x\r\nHost: h\r\n\r\n", 400),
            ("GET http://h/ HTTX/1.1\r\nHost: h\r\n\r\n", 400),
            ("G@T http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1 \r\nHost: h\r\n\r\n", 400),
            ("GET http://h/\u{7F} HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http://h:0/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http://h:99999/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http:/h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET gopher://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("CONNECT example.com HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http://h/ HTTP/1.1\nHost: h\n\n", 400),
            ("GET http://h/ HTTP/1.1\r\nHost: h\r\nA: b\rc\r\n\r\n", 400),
            ("GET http://h/page#part HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http://h#part HTTP/1.1\r\nHost: h\r\n\r\n", 400),
        ])
    func rejections(text: String, status: Int) {
        guard case .failure(let error) = Self.parse(text) else {
            Issue.record("accepted: \(text.debugDescription)")
            return
        }
        #expect(Problem(error).status == status)
    }

    @Test("A later HTTP/1 minor version is read as HTTP/1.1 (RFC 9110 §2.5)")
    func laterMinorVersion() throws {
        #expect(try Self.head("GET http://h/ HTTP/1.2\r\nHost: h\r\n\r\n").minorVersion == 1)
        #expect(try Self.head("GET http://h/ HTTP/1.9\r\nHost: h\r\n\r\n").minorVersion == 1)
    }

    @Test("An HTTP/1.0 request needs no Host; keep-alive follows the version rules")
    func versions() throws {
        let old = try Self.head("GET http://h/ HTTP/1.0\r\n\r\n")
        #expect(old.minorVersion == 0)
        #expect(!old.wantsKeepAlive)
        #expect(try Self.head("GET http://h/ HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").wantsKeepAlive)
        #expect(try Self.head("GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n").wantsKeepAlive)
        #expect(try !Self.head("GET http://h/ HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n").wantsKeepAlive)
    }

    @Test("Leading empty lines are skipped; body framing is read from the fields")
    func framing() throws {
        #expect(
            try Self.head("\r\n\r\nPOST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n\r\n").bodyFraming
                == .length(12))
        #expect(
            try Self.head("POST http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n").bodyFraming
                == .chunked)
        #expect(try Self.head("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n").bodyFraming == .none)
    }

    @Test("Limits: long request line is 414, big header section 431, big Content-Length 413")
    func limits() {
        var limits = RequestParser.Limits()
        limits.maxRequestLine = 100
        limits.maxHeaderBytes = 300
        limits.maxBodyBytes = 10
        let longLine = "GET http://h/\(String(repeating: "a", count: 200)) HTTP/1.1\r\nHost: h\r\n\r\n"
        let longIncomplete = "GET http://h/\(String(repeating: "a", count: 200))"
        let bigHeaders = "GET http://h/ HTTP/1.1\r\nHost: h\r\nX: \(String(repeating: "b", count: 400))\r\n\r\n"
        let bigBody = "POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n"
        for (text, status) in [(longLine, 414), (longIncomplete, 414), (bigHeaders, 431), (bigBody, 413)] {
            guard case .failure(let error) = Self.parse(text, limits: limits) else {
                Issue.record("accepted \(text.prefix(40))")
                continue
            }
            #expect(Problem(error).status == status)
        }
        // Too many field lines: 431 that says so, not that the section is too many bytes.
        limits.maxFieldCount = 3
        guard
            case .failure(let error) = Self.parse(
                "GET http://h/ HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits)
        else {
            Issue.record("accepted 4 fields with a limit of 3")
            return
        }
        #expect(Problem(error).status == 431)
        #expect(Problem(error).detail == "The header section has more than 3 field lines.")
    }

    @Test("Byte-at-a-time input gives the same result as one read (property over many requests)")
    func incrementalEqualsWhole() {
        let samples = [
            "GET http://h/x HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: two words\r\n\r\n",
            "\r\nPOST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
            "GET http://h/ HTTP/1.1\r\nHost: h\r\nBad\rValue: x\r\n\r\n",
            "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
        ]
        for sample in samples {
            let bytes = Array(sample.utf8)
            let whole = bytes.withUnsafeBytes { buffer -> RequestParser.Outcome in
                var parser = RequestParser()
                return parser.parse(buffer)
            }
            var parser = RequestParser()
            var incremental = RequestParser.Outcome.needMore
            for end in 1...bytes.count {
                incremental = Array(bytes[0..<end]).withUnsafeBytes { parser.parse($0) }
                if incremental != .needMore { break }
            }
            #expect(incremental == whole, "\(sample.debugDescription)")
        }
    }

    @Test("Random bytes never crash the parser and never yield a head with invalid fields")
    func randomInput() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("GET http://h/ HTTP/1.1\r\nHost:;:, \t\u{0}\u{7F}abcXYZ0123456789-".utf8)
        for _ in 0..<3000 {
            let count = Int.random(in: 0..<200, using: &generator)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            var parser = RequestParser()
            let outcome = bytes.withUnsafeBytes { parser.parse($0) }
            if case .head(let request, let consumed) = outcome {
                #expect(consumed <= bytes.count)
                for field in request.headers { #expect(!field.name.isEmpty && !field.name.contains(" ")) }
            }
        }
    }

    @Test("Expect is a list: members on one line or several, empty ones ignored, any other member unsupported")
    func expectation() throws {
        func expectation(_ fields: String) throws -> ProxyRequest.Expectation {
            try Self.head("PUT http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\(fields)\r\n").expectation
        }
        #expect(try expectation("") == .none)
        #expect(try expectation("Expect:\r\n") == .none)
        #expect(try expectation("Expect: , ,\r\n") == .none)
        #expect(try expectation("Expect: 100-Continue\r\n") == .continueFirst)
        #expect(try expectation("Expect: 100-continue,\r\n") == .continueFirst)
        #expect(try expectation("Expect: 100-continue, 100-continue\r\n") == .continueFirst)
        #expect(try expectation("Expect: 100-continue\r\nExpect: 100-continue\r\n") == .continueFirst)
        #expect(try expectation("Expect: 100-continue, foo\r\n") == .unsupported("foo"))
        #expect(try expectation("Expect:\r\nExpect: bar=1\r\n") == .unsupported("bar=1"))
        #expect(try Self.head("PUT http://h/ HTTP/1.1\r\nHost: h\r\nExpect: 100-continue,\r\n\r\n").expectsContinue)
    }
}
