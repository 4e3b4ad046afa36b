import Foundation
import Sluice
import Testing

@Suite("NullStripper")
struct NullStripperTests {
    static func strip(_ text: String, _ mode: NullStripper.Mode = .members) -> String? {
        NullStripper.strip(Array(text.utf8), mode: mode).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test(
        "Members with null values go, with the comma and whitespace that belonged to them",
        arguments: [
            (#"{"a":null}"#, #"{}"#),
            (#"{"a":1,"b":null}"#, #"{"a":1}"#),
            (#"{"a":null,"b":1}"#, #"{"b":1}"#),
            (#"{"a":null,"b":null,"c":1,"d":null}"#, #"{"c":1}"#),
            (#"{ "a" : null , "b" : 2 }"#, #"{ "b" : 2 }"#),
            (#"{ "a": 1, "b": null }"#, #"{ "a": 1 }"#),
            (#"{ "a": null }"#, #"{ }"#),
            (#"{"d": null, "e": "x"}"#, #"{"e": "x"}"#),
            (#"{"a": null, "b": null, "c": 1, "d": null}"#, #"{"c": 1}"#),
            ("{\n  \"a\": null,\n  \"b\": null,\n  \"c\": 3\n}", "{\n  \"c\": 3\n}"),
            ("{\n  \"a\": 1,\n  \"b\": null,\n  \"c\": 3\n}", "{\n  \"a\": 1,\n  \"c\": 3\n}"),
            ("{\n  \"a\": null,\n  \"b\": 2\n}", "{\n  \"b\": 2\n}"),
            ("{\n  \"a\": 1,\n  \"b\": null\n}", "{\n  \"a\": 1\n}"),
            (#"[{"a":null,"b":[null,{"c":null}]},null]"#, #"[{"b":[null,{}]},null]"#),
            (#"{"a":{"b":{"c":null,"d":"x"}},"e":null}"#, #"{"a":{"b":{"d":"x"}}}"#),
            (#"{"null":"null","n":"a\"null\\","x":null}"#, #"{"null":"null","n":"a\"null\\"}"#),
            (#"{"a":1.50e+10,"b":-0.0,"c":null,"d":"\u00e9\n\/"}"#, #"{"a":1.50e+10,"b":-0.0,"d":"\u00e9\n\/"}"#),
            (#"{"":null,"é":null,"k":true}"#, #"{"k":true}"#),
        ])
    func members(input: String, expected: String) {
        #expect(Self.strip(input) == expected)
    }

    @Test("Mode all also drops null array elements")
    func all() {
        #expect(Self.strip(#"[null,1,null,2,null]"#, .all) == "[1,2]")
        #expect(Self.strip(#"[null]"#, .all) == "[]")
        #expect(Self.strip(#"[ null , null ]"#, .all) == "[ ]")
        #expect(Self.strip(#"[null, 1, null, 2]"#, .all) == "[1, 2]")
        #expect(Self.strip("[\n  null,\n  null\n]", .all) == "[\n]")
        #expect(Self.strip("{\n  \"a\": null,\n  \"b\": [null, null]\n}", .all) == "{\n  \"b\": []\n}")
        #expect(Self.strip(#"{"a":[null,{"b":null}],"c":null}"#, .all) == #"{"a":[{}]}"#)
        #expect(Self.strip(#"[null,1]"#, .members) == "[null,1]")
    }

    @Test("Nothing to strip returns the same bytes; scalars and top-level null stay")
    func untouched() {
        for text in ["{}", "[]", "null", " 1 ", "\"x\"", #"{"a":[null]}"#, "\u{FEFF}{\"a\":1}", "[true,false,null]"] {
            #expect(Self.strip(text) == text)
        }
    }

    @Test(
        "Invalid JSON is refused, wherever the fault is",
        arguments: [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[01]", "[1.]", "[.5]", "[1e]", "[-]",
            "nul", "nullx", "[nul]", "{\"a\":nul}", "{\"a\":null x}", "\"\\x\"", "\"\\u12G4\"", "\"a\u{01}b\"",
            "[1] [2]", "{\"a\":null,}", "{\"a\":null,,\"b\":1}", "[\"\\ud800\" ", "{\"a\":1}}", "[[]", "'a'",
            "{\"a\":null", "{\"a\":null}]", "[null,]",
            // Control bytes where whitespace may be: only space, tab, LF and CR are whitespace.
            "[1,\u{0C}2]", "{\n\u{0B}\"a\":1}", "{\n        \u{01}\"a\":null}", "[1,\n \u{00} 2]", "[\r\n\t\u{1F}1]",
            "{\"a\":\n  \u{0C}  null}", "[1]\n        \u{0C}",
        ])
    func invalid(text: String) {
        #expect(Self.strip(text) == nil)
        #expect(Self.strip(text, .all) == nil)
    }

    @Test("Malformed UTF-8 inside strings is invalid JSON")
    func utf8() {
        let bad: [[UInt8]] = [
            [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xFF, 0x22],
        ]
        for bytes in bad { #expect(NullStripper.strip(bytes) == nil) }
        #expect(NullStripper.strip(Array("\"€😀\"".utf8)) != nil)
    }

    @Test("100,000 levels of nesting neither crash nor recurse")
    func deep() {
        let depth = 100_000
        let open = String(repeating: "{\"a\":", count: depth)
        let text = open + "{\"x\":null,\"y\":1}" + String(repeating: "}", count: depth)
        let expected = open + "{\"y\":1}" + String(repeating: "}", count: depth)
        #expect(Self.strip(text) == expected)
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(Self.strip(arrays) == arrays)
        #expect(Self.strip(String(repeating: "[", count: depth)) == nil)
    }

    @Test("Random documents: equal to parse + remove + re-serialise, valid, untouched when nothing to remove")
    func property() throws {
        var generator = SeededGenerator(seed: 0x51C3)
        for round in 0..<400 {
            let text = RandomJSON.document(&generator)
            let bytes = Array(text.utf8)
            for mode in NullStripper.Mode.allCases {
                let output = try #require(NullStripper.strip(bytes, mode: mode), "round \(round): \(text)")
                let expected = RandomJSON.removingNulls(try Self.parse(bytes), mode: mode)
                let actual = try Self.parse(output)
                #expect(RandomJSON.equal(actual, expected), "round \(round) \(mode): \(text)")
                if RandomJSON.equal(try Self.parse(bytes), expected) { #expect(output == bytes) }
            }
            // Truncated documents never crash, and whatever is accepted really is JSON.
            let cut = Int.random(in: 0..<bytes.count, using: &generator)
            if let partial = NullStripper.strip(Array(bytes[0..<cut])) { _ = try Self.parse(partial) }
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }
}

/// A deterministic generator (tests reproduce).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random JSON text with nulls everywhere, varied whitespace, escapes and number forms.
enum RandomJSON {
    static func document(_ g: inout SeededGenerator) -> String { ws(&g) + value(&g, depth: 0) + ws(&g) }

    static func ws(_ g: inout SeededGenerator) -> String {
        ["", "", "", " ", "\n  ", "\t", " \r\n ", "\n          ", "\r\n\t\t", "\n\n    \n \t  \r\n   "]
            .randomElement(using: &g)!
    }

    static func value(_ g: inout SeededGenerator, depth: Int) -> String {
        let pick = Int.random(in: 0..<(depth > 4 ? 6 : 9), using: &g)
        switch pick {
        case 0, 1: return "null"
        case 2: return string(&g)
        case 3:
            return ["0", "-1", "12.50", "1e3", "-0.0", "6.02E+23", "1E-7", "123456789012345678"].randomElement(
                using: &g)!
        case 4: return Bool.random(using: &g) ? "true" : "false"
        case 5: return "[]"
        case 6, 7:
            let count = Int.random(in: 0...5, using: &g)
            // Unique keys: with duplicates "the value" of a member is not defined (RFC 8259 §4).
            let members = (0..<count).map { index in
                let key = "\"" + String(index) + string(&g).dropFirst()
                return ws(&g) + key + ws(&g) + ":" + ws(&g) + value(&g, depth: depth + 1) + ws(&g)
            }
            return "{" + members.joined(separator: ",") + (count == 0 ? ws(&g) : "") + "}"
        default:
            let count = Int.random(in: 0...5, using: &g)
            let items = (0..<count).map { _ in ws(&g) + value(&g, depth: depth + 1) + ws(&g) }
            return "[" + items.joined(separator: ",") + "]"
        }
    }

    static func string(_ g: inout SeededGenerator) -> String {
        let pieces = [
            "a", "key", "null", "\\\"", "\\\\", "\\n", "\\u00e9", "\\ud83d\\ude00", "é", "😀", " ", ",", ":", "{", "]",
        ]
        let count = Int.random(in: 0...4, using: &g)
        return "\"" + (0..<count).map { _ in pieces.randomElement(using: &g)! }.joined() + "\""
    }

    static func removingNulls(_ value: Any, mode: NullStripper.Mode) -> Any {
        if let object = value as? [String: Any] {
            return object.filter { !($0.value is NSNull) }.mapValues { removingNulls($0, mode: mode) }
        }
        if let array = value as? [Any] {
            let kept = mode == .all ? array.filter { !($0 is NSNull) } : array
            return kept.map { removingNulls($0, mode: mode) }
        }
        return value
    }

    static func equal(_ a: Any, _ b: Any) -> Bool {
        if let x = a as? [String: Any], let y = b as? [String: Any] {
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        }
        if let x = a as? [Any], let y = b as? [Any] {
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        }
        if a is NSNull || b is NSNull { return a is NSNull && b is NSNull }
        if let x = a as? String, let y = b as? String { return x == y }
        if let x = a as? NSNumber, let y = b as? NSNumber { return x == y }
        return false
    }
}
