import Contract
import Foundation
import XCTest

/// Broken and hostile bodies are verdicts: never a crash, a stall or memory that grows with them.
final class HostileBodyTests: XCTestCase {
    func schema(_ text: String) throws -> SchemaValidator { try inlineSchema(text) }

    func testNestingDeeperThan512IsAViolationNotAStackOverflow() throws {
        let validator = try schema(##"{"items": {"$ref": "#"}}"##)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let verdict = validator.validate(Array(deep.utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["max-depth"])
        XCTAssertEqual(verdict.violations.first?.pointer.split(separator: "/").count, 512)
        XCTAssertTrue(
            validator.validate(Array((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8))
                .passed)
    }

    func testHugeNumbersLongStringsAndBadTextAreVerdicts() throws {
        let validator = try schema(
            #"{"type": "object", "properties": {"n": {"type": "integer", "maximum": 10, "multipleOf": 5}, "s": {"type": "string", "maxLength": 5}}}"#
        )
        var verdict = validator.validate(Array(("{\"n\": 1" + String(repeating: "0", count: 5000) + "}").utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["maximum"])
        verdict = validator.validate(Array("{\"n\": 1e400000}".utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["maximum"], "\(verdict.violations)")
        verdict = validator.validate(Array("{\"n\": 10.0}".utf8))
        XCTAssertTrue(verdict.passed, "10.0 is an integer and a multiple of 5")
        verdict = validator.validate(Array(("{\"s\": \"" + String(repeating: "é", count: 1_000_000) + "\"}").utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["maxLength"])
        XCTAssertEqual(verdict.violations.first?.found, "1000000")
        // Invalid UTF-8, a lone surrogate, a bad escape, a truncated body, text after the value.
        for body in [
            [0x7B, 0x22, 0x73, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D], Array(#"{"s": "\ud800"}"#.utf8),
            Array(#"{"s": "\x"}"#.utf8), Array(#"{"s": "ab"#.utf8), Array("{} {}".utf8), Array("{\"s\": tru}".utf8),
        ] as [[UInt8]] {
            let verdict = validator.validate(body)
            XCTAssertEqual(verdict.violations.map(\.keyword), ["json"], String(decoding: body, as: UTF8.self))
        }
        // A malformed item of an array is pointed at where it stands, after the good ones.
        let any = try schema("{}")
        for (body, pointer) in [
            ("[1,2,3,tru]", "/3"), (#"[1,"x\uZZZZ"]"#, "/1"), (#"{"a":[{"b":1},{"c":"\q"}]}"#, "/a/1/c"),
        ] {
            XCTAssertEqual(any.validate(Array(body.utf8)).violations.map(\.pointer), [pointer], body)
        }
        // What fails between an object's members is the object's: a trailing comma, a missing
        // comma, a member name that is none; said by what stands there.
        for (body, pointer, found) in [
            ("{\n  \"a\": 1,\n  \"b\": 2,\n}", "", "a trailing comma before '}' at byte 22"),
            (#"{"a":{"b":1,}}"#, "/a", "a trailing comma before '}' at byte 12"),
            (#"[{"a":1 "b":2}]"#, "/0", "'\"' where ',' or '}' belongs at byte 8"),
            (#"{"a":1,2}"#, "", "'2' where a member name belongs at byte 7"),
            (#"{"a" 1}"#, "/a", "'1' where ':' belongs at byte 5"),
            (#"{"a":}"#, "/a", "'}' where a value belongs at byte 5"),
            ("[1,2,]", "/2", "a trailing comma before ']' at byte 5"),
            ("[1 2]", "/1", "'2' where ',' or ']' belongs at byte 3"),
        ] {
            let violations = any.validate(Array(body.utf8)).violations
            XCTAssertEqual(violations.map(\.pointer), [pointer], body)
            XCTAssertEqual(violations.first?.found, found, body)
        }
        // A bad escape is said at its backslash; a surrogate without its pair is named.
        XCTAssertEqual(
            any.validate(Array(#"[1,"x\uZZZZ"]"#.utf8)).violations.first?.found, "a string with a bad escape at byte 5")
        XCTAssertEqual(
            any.validate(Array(#"["ok","ab\ud800cd"]"#.utf8)).violations.first?.found,
            "a string with an unpaired surrogate escape at byte 9")
        // A word that is no literal is said at its first wrong byte (a number that is none, at its
        // start), whole or fed in pieces (a
        // word carried from one piece to the next counts from where it began).
        for (body, offset) in [("notjson", 1), (#"{"a": tru}"#, 9), ("  nul", 5), ("[1, xyz]", 4), ("12x", 0)] {
            let whole = any.validate(Array(body.utf8)).violations.first?.found ?? ""
            XCTAssertTrue(whole.hasSuffix(" at byte \(offset)"), "\(body): \(whole)")
            var pieces = any.validation()
            for byte in Array(body.utf8) { pieces.feed([byte]) }
            XCTAssertEqual(pieces.finish().violations.first?.found, whole, body)
        }
        // Duplicate member names the schema knows.
        verdict = validator.validate(Array(#"{"n": 5, "n": 10}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["duplicate-key"])
    }

    func testACatastrophicPatternIsReportedNotAStall() throws {
        let validator = try schema(#"{"type": "string", "pattern": "^(a+)+$"}"#)
        let start = Date()
        let verdict = validator.validate(Array(("\"" + String(repeating: "a", count: 40) + "b\"").utf8))
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
        XCTAssertEqual(verdict.violations.first?.keyword, "pattern")
        XCTAssertTrue(verdict.violations.first?.found.contains("match limit") == true)
    }

    func testEveryPieceSizeGivesTheSameVerdict() throws {
        let validator = try schema(
            #"{"type": "array", "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "name": {"type": "string", "minLength": 2}, "tags": {"type": "array", "uniqueItems": true}}}}"#
        )
        var body = "["
        for index in 0..<300 {
            body +=
                (index > 0 ? "," : "")
                + #"{"id": \#(index), "name": "n\u00e9\#(index)", "tags": ["a", "b\#(index % 7)"], "x": [1.5e3, true, null, {"k": "v\"q"}]}"#
        }
        body += #",{"name": "x", "tags": [1, 1]}]"#
        let bytes = Array(body.utf8)
        let whole = validator.validate(bytes)
        XCTAssertEqual(Set(whole.violations.map(\.keyword)), ["required", "minLength", "uniqueItems"])
        for size in [1, 2, 3, 7, 64, 4096] {
            var validation = validator.validation()
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + size, bytes.count)
                validation.feed(Array(bytes[offset..<end]))
                offset = end
            }
            let verdict = validation.finish()
            XCTAssertEqual(
                verdict.violations.map(\.description), whole.violations.map(\.description), "pieces of \(size)")
        }
    }

    func testALargeArrayStreamsInBoundedMemory() throws {
        // 200,000 objects fed in 64 KiB pieces: the validator's state is the open groups only.
        let validator = try schema(
            #"{"type": "array", "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 0}}}}"#
        )
        var validation = validator.validation()
        var piece = "["
        for index in 0..<200_000 {
            piece += (index > 0 ? "," : "") + #"{"id": \#(index), "note": "streamed"}"#
            if piece.utf8.count > 65536 {
                validation.feed(Array(piece.utf8))
                piece = ""
            }
        }
        validation.feed(Array((piece + "]").utf8))
        XCTAssertTrue(validation.finish().passed)
    }
}
