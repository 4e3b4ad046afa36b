import Testing

@testable import Sluice

/// Pins down which origin response heads frame their body unambiguously, and how repeated lengths fold.
@Suite("ResponseFraming: Content-Length, Transfer-Encoding and field syntax from the origin")
struct ResponseFramingTests {
    /// The violation for a 200 head with `fields`, and the head as it would be relayed.
    static func check(_ fields: [(String, String)]) -> (violation: String?, head: ResponseHead) {
        var head = ResponseHead(status: 200, reason: "OK", headers: HTTPFields(fields))
        let violation = ResponseFraming.violation(&head)
        return (violation, head)
    }

    @Test("No framing field, one plain length, or chunked alone pass untouched")
    func usual() {
        for fields in [
            [("Content-Type", "text/plain")], [("Content-Length", "42")], [("content-length", "0")],
            [("Transfer-Encoding", "chunked")], [("Transfer-Encoding", "Chunked")],
        ] {
            let (violation, head) = Self.check(fields)
            #expect(violation == nil, "\(fields)")
            #expect(head.headers == HTTPFields(fields), "\(fields)")
        }
    }

    @Test("Identical lengths, repeated or listed, and a padded length fold into one Content-Length")
    func folded() {
        for fields in [
            [("Content-Length", "5"), ("Content-Length", "5")], [("Content-Length", "5, 5")],
            [("Content-Length", " 5")], [("Content-Length", "5"), ("X-A", "b"), ("Content-Length", "5,5")],
        ] {
            let (violation, head) = Self.check(fields)
            #expect(violation == nil, "\(fields)")
            #expect(head.headers.values("content-length") == ["5"], "\(fields)")
        }
        let (_, head) = Self.check([("Content-Length", "5"), ("X-A", "b"), ("Content-Length", "5")])
        #expect(head.headers.map(\.name) == ["Content-Length", "X-A"], "the first line keeps its place")
    }

    @Test("Conflicting, empty or non-digit lengths are refused, naming what was sent")
    func badLengths() {
        #expect(
            Self.check([("Content-Length", "1"), ("Content-Length", "2")]).violation
                == "The origin sent an invalid or conflicting Content-Length (1, 2).")
        #expect(
            Self.check([("Content-Length", "5, 6")]).violation
                == "The origin sent an invalid or conflicting Content-Length (5, 6).")
        for value in ["", "-1", "+5", "0x10", "5,", "1e3", "five"] {
            #expect(
                Self.check([("Content-Length", value)]).violation
                    == "The origin sent an invalid or conflicting Content-Length (\(value)).", "\(value)")
        }
    }

    @Test("Transfer-Encoding with Content-Length, or a coding other than chunked alone, is refused")
    func transferCodings() {
        #expect(
            Self.check([("Transfer-Encoding", "chunked"), ("Content-Length", "3")]).violation
                == "The origin framed its body with both Transfer-Encoding and Content-Length.")
        #expect(
            Self.check([("Transfer-Encoding", "gzip, chunked")]).violation
                == "The origin used a transfer coding Sluice does not decode: gzip, chunked.")
        #expect(
            Self.check([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]).violation
                == "The origin used a transfer coding Sluice does not decode: chunked, chunked.")
        #expect(
            Self.check([("Transfer-Encoding", "identity")]).violation
                == "The origin used a transfer coding Sluice does not decode: identity.")
    }

    @Test("A field name must be a non-empty token")
    func names() {
        func violation(_ name: String) -> String? {
            Array(name.utf8).withUnsafeBytes { ResponseFraming.nameViolation($0) }
        }
        for name in ["Content-Type", "x-custom_1", "!#$%&'*+-.^_`|~"] {
            #expect(violation(name) == nil, "\(name)")
        }
        for name in ["", "Bad Name", "Na:me", "Tab\tbed", "Caf\u{E9}", "(x)"] {
            #expect(violation(name) == "The origin sent a header field name that is not a token.", "\(name)")
        }
    }

    @Test("A field value must not hold CR, LF or NUL; tabs and other bytes pass")
    func values() {
        func violation(_ value: String) -> String? {
            Array(value.utf8).withUnsafeBytes { ResponseFraming.valueViolation($0) }
        }
        for value in ["", "plain", "a\tb", "caf\u{E9}", "quoted \"x\", y=1"] {
            #expect(violation(value) == nil, "\(value)")
        }
        for value in ["a\rb", "a\nSet-Cookie: x=1", "a\u{0}b", "end\r\n"] {
            #expect(violation(value) == "The origin sent a header field value with a CR, LF or NUL inside.")
        }
    }
}
