import Testing

@testable import Sluice

@Suite("ResponseHeadParser")
struct ResponseHeadParserTests {
    /// Feeds `lines` (each without its CRLF, which is added) and returns every step that was not `.more`.
    static func steps(_ lines: [String], limit: Int = 64 * 1024) -> [ResponseHeadParser.Step] {
        var parser = ResponseHeadParser(maxHeaderBytes: limit)
        var steps: [ResponseHeadParser.Step] = []
        for line in lines {
            let bytes = Array((line + "\r\n").utf8)
            let step = bytes.withUnsafeBytes { parser.consume($0) }
            if step != .more { steps.append(step) }
            if case .refused = step { break }
            if case .notHTTP = step { break }
        }
        return steps
    }

    static func head(_ status: Int, _ reason: String, _ version: String = "1.1", _ fields: [(String, String)] = [])
        -> ResponseHead
    {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(name: name, value: value) }
        return ResponseHead(status: status, reason: reason, version: version, headers: headers)
    }

    @Test("A final head with its fields, names and values trimmed of optional whitespace")
    func finalHead() {
        #expect(
            Self.steps(["HTTP/1.1 200 OK", "Content-Type:  text/plain ", "X-Empty:", "Content-Length: 2", ""])
                == [
                    .final(
                        Self.head(
                            200, "OK", "1.1",
                            [("Content-Type", "text/plain"), ("X-Empty", ""), ("Content-Length", "2")]))
                ])
    }

    @Test(
        "Status-line variants",
        arguments: [
            ("HTTP/2 204", Self.head(204, "", "2")),
            ("HTTP/1.0 404 Not Found", Self.head(404, "Not Found", "1.0")),
            ("HTTP/1.1 599 ", Self.head(599, "", "1.1")),
            ("HTTP/1.1 200 Fine\u{01}ish", Self.head(200, "Fineish", "1.1")),
            ("HTTP/1.1 200 Tab\there", Self.head(200, "Tab\there", "1.1")),
            ("HTTP/1.1 304", Self.head(304, "", "1.1")),
            ("HTTP/1.2 200 OK", Self.head(200, "OK", "1.2")),
            ("HTTP/3 200 OK", Self.head(200, "OK", "3")),
        ])
    func statusLines(line: String, expected: ResponseHead) {
        #expect(Self.steps([line, ""]) == [.final(expected)])
    }

    @Test(
        "A status line of no HTTP/1.x version (libcurl's HTTP/2 and HTTP/3 aside), or a code past 599, is refused",
        arguments: [
            "HTTP/ 200 OK", "HTTP/1.10 200 OK", "HTTP/2.0 200 OK", "HTTP/0.9 200 OK", "HTTP/1.1 600 Odd",
            "HTTP/1.1 999",
        ])
    func refusedStatusLines(line: String) {
        guard case .refused(let why) = Self.steps([line, ""]).first else {
            Issue.record("\(line): not refused")
            return
        }
        #expect(why.hasPrefix("The origin"), "\(why)")
    }

    @Test(
        "What is not a status line stops the transfer",
        arguments: [
            "ICY 200 OK", "HTTP/1.1 20", "HTTP/1.1 2x0 OK", "HTTP/1.1 200OK", "garbage", "HTTP/", "HTTP/1.1",
            "http/1.1 200 OK", "HTTP/1.1 /00 OK",
        ])
    func notHTTP(line: String) {
        #expect(Self.steps([line, ""]) == [.notHTTP])
    }

    @Test("Interim heads come before the final one, each complete, and the size limit restarts per section")
    func interim() {
        let steps = Self.steps(
            [
                "HTTP/1.1 103 Early Hints", "Link: </a.css>; rel=preload", "", "HTTP/1.1 100 Continue", "",
                "HTTP/1.1 200 OK", "A: b", "",
            ],
            limit: 64)
        #expect(
            steps == [
                .interim(Self.head(103, "Early Hints", "1.1", [("Link", "</a.css>; rel=preload")])),
                .interim(Self.head(100, "Continue")),
                .final(Self.head(200, "OK", "1.1", [("A", "b")])),
            ])
    }

    @Test("An obs-folded line joins the field before it with one space (RFC 9112 §5.2)")
    func folded() {
        #expect(
            Self.steps(["HTTP/1.1 200 OK", "X-Long: one", " \t two", "\tthree ", "B: c", ""])
                == [.final(Self.head(200, "OK", "1.1", [("X-Long", "one two three"), ("B", "c")]))])
        // Only the line the fold continues changes: an earlier line of the same name stays.
        #expect(
            Self.steps(["HTTP/1.1 200 OK", "Set-Cookie: a=1", "Set-Cookie: b=2", " ; Path=/", ""])
                == [.final(Self.head(200, "OK", "1.1", [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2 ; Path=/")]))])
        // A continuation with no field line before it is refused, as a line without a colon.
        #expect(
            Self.steps(["HTTP/1.1 200 OK", " folded", ""]) == [
                .refused("The origin sent a header line without a colon.")
            ])
        // The parser starts each section afresh: a second response's head has none of the first's fields.
        #expect(
            Self.steps(["HTTP/1.1 100 Continue", "A: 1", "", "HTTP/1.1 204 No Content", "B: 2", ""])
                == [
                    .interim(Self.head(100, "Continue", "1.1", [("A", "1")])),
                    .final(Self.head(204, "No Content", "1.1", [("B", "2")])),
                ])
    }

    @Test("A value that is not UTF-8 is kept as its bytes (obs-text is opaque, RFC 9110 §5.5), folded or not")
    func opaqueValues() throws {
        var parser = ResponseHeadParser(maxHeaderBytes: 64 * 1024)
        let lines: [[UInt8]] = [
            Array("HTTP/1.1 200 OK\r\n".utf8),
            Array("Content-Disposition: attachment; filename=\"caf".utf8) + [0xE9] + Array(".txt\"\r\n".utf8),
            Array("X-Utf8: caf\u{e9}\r\n".utf8),
            Array("X-Folded: a\r\n".utf8), [0x20, 0xFF, 0x0D, 0x0A],
            Array("\r\n".utf8),
        ]
        var last = ResponseHeadParser.Step.more
        for line in lines { last = line.withUnsafeBytes { parser.consume($0) } }
        guard case .final(let head) = last else { throw Failure(step: last) }
        let fields = head.headers.fields
        #expect(fields[0].opaque && fields[0].value == "attachment; filename=\"caf\u{e9}.txt\"")
        #expect(
            HTTPFields.Field.wireBytes(fields[0].value, opaque: true)
                == Array("attachment; filename=\"caf".utf8) + [0xE9] + Array(".txt\"".utf8))
        // Valid UTF-8 is text as it is.
        #expect(!fields[1].opaque && fields[1].value == "caf\u{e9}")
        #expect(fields[2].opaque && HTTPFields.Field.wireBytes(fields[2].value, opaque: true) == [0x61, 0x20, 0xFF])
        // A written head holds the bytes received.
        let written = ResponseWriter.head(status: 200, reason: "OK", headers: head.headers)
        #expect(written.starts(with: Array("HTTP/1.1 200 OK\r\n".utf8) + lines[1]))
        // A new value is text again.
        var edited = fields[0]
        edited.value = "inline"
        #expect(!edited.opaque)
    }

    struct Failure: Error { let step: ResponseHeadParser.Step }

    @Test(
        "A value is text when its bytes are UTF-8, else opaque, and its bytes come back either way",
        arguments: [
            ([0x61, 0x62], false), ([0x63, 0xC3, 0xA9], false), ([0xF0, 0x9F, 0x98, 0x80, 0x21], false),
            ([0xE9], true), ([0xF0, 0x9F, 0x98], true),  // cut short: repaired to a U+FFFD of three bytes
            ([0xC0, 0x80], true), ([0xED, 0xA0, 0x80], true), ([0xEF, 0xBF, 0xBD], false),
            ([0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xFF], true),
        ] as [([UInt8], Bool)])
    func wireText(bytes: [UInt8], opaque: Bool) {
        let (text, found) = bytes.withUnsafeBytes { HTTPFields.Field.wireText($0) }
        #expect(found == opaque)
        #expect(HTTPFields.Field.wireBytes(text, opaque: found) == bytes)
    }

    @Test("Sections over the limit, lines without a colon, bad names and values are refused")
    func refused() {
        let big = String(repeating: "v", count: 100)
        guard case .refused(let detail) = Self.steps(["HTTP/1.1 200 OK", "A: \(big)", ""], limit: 64).first else {
            Issue.record("an oversized section passed")
            return
        }
        #expect(detail.contains("exceeds 64 bytes"))
        #expect(
            Self.steps(["HTTP/1.1 200 OK", "no colon here", ""]) == [
                .refused("The origin sent a header line without a colon.")
            ])
        for line in ["Bad Name: x", "A: x\u{00}y", ": no name"] {
            guard case .refused = Self.steps(["HTTP/1.1 200 OK", line, ""]).first else {
                Issue.record("\(line) passed")
                continue
            }
        }
        // Framing: two different lengths
        guard case .refused = Self.steps(["HTTP/1.1 200 OK", "Content-Length: 1", "Content-Length: 2", ""]).first
        else {
            Issue.record("conflicting Content-Length passed")
            return
        }
    }

    @Test("A line with or without its line end reads the same")
    func lineEnds() {
        var parser = ResponseHeadParser(maxHeaderBytes: 1024)
        for line in ["HTTP/1.1 200 OK\n", "A: b"] {
            _ = Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        let last = Array("\r\n".utf8).withUnsafeBytes { parser.consume($0) }
        #expect(last == .final(Self.head(200, "OK", "1.1", [("A", "b")])))
    }
}
