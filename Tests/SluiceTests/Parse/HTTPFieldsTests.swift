import Sluice
import Testing

@Suite("HTTPFields")
struct HTTPFieldsTests {
    @Test("Lookups ignore ASCII letter case only, keep order, and set replaces every line")
    func caseInsensitive() {
        var fields = HTTPFields([("Content-Type", "a"), ("X-A", "1"), ("x-a", "2"), ("X@", "at")])
        #expect(fields["content-type"] == "a")
        #expect(fields["CONTENT-TYPE"] == "a")
        #expect(fields.values("X-a") == ["1", "2"])
        #expect(fields["x`"] == nil)  // '@' | 0x20 is '`': not a letter, so not the same name
        #expect(fields["X@"] == "at")
        #expect(!fields.contains("content-typ"))
        fields.set("x-A", "3")
        #expect(fields.fields.map(\.value) == ["a", "3", "at"])
        fields.remove("CONTENT-type")
        #expect(fields.count == 2)
        #expect(fields.tokens("x-a") == ["3"])
    }
}

@Suite("FieldCode")
struct FieldCodeTests {
    @Test("Every listed name has its code in any case, fits the presence bits, and nothing else has one")
    func classifies() {
        for code in FieldCode.allCases {
            #expect(code.rawValue < 64)
            guard code != .other else { continue }
            let lower = code.lowercaseName.description
            #expect(FieldCode(lower) == code)
            #expect(FieldCode(lower.uppercased()) == code)
            let mixed = String(
                lower.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element })
            #expect(FieldCode(mixed) == code)
            // One letter off, one byte longer or shorter: another name.
            #expect(FieldCode(String(lower.dropLast()) + "_") == .other)
            #expect(FieldCode(lower + "s") != code)
            #expect(FieldCode(String(lower.dropFirst())) != code)
        }
        // Non-letters are not folded: '@' | 0x20 is '`'.
        #expect(FieldCode("d@te") == .other)
        #expect(FieldCode("") == .other)
        #expect(FieldCode("x") == .other)
        #expect(FieldCode("X-Custom-Header") == .other)
        #expect(FieldCode("content-lengtH") == .contentLength)
        #expect(FieldCode("content-length ") == .other)
    }

    @Test("Lookups by code and by name agree while lines come and go")
    func presence() {
        var fields = HTTPFields([("Content-Length", "5"), ("X-A", "1"), ("Vary", "accept")])
        #expect(fields[.contentLength] == "5")
        #expect(fields.contains(.vary))
        #expect(!fields.contains(.transferEncoding))
        #expect(fields["transfer-encoding"] == nil)
        fields.append(name: "transfer-ENCODING", value: "chunked")
        #expect(fields.contains(.transferEncoding))
        #expect(fields.fields.last?.is(.transferEncoding) == true)
        fields.remove("Content-length")
        #expect(!fields.contains(.contentLength))
        #expect(fields[.contentLength] == nil)
        fields.removeAll { $0.is(.vary) }
        #expect(!fields.contains("vary"))
        fields.set("Vary", "*")
        #expect(fields[.vary] == "*")
        #expect(fields.fields.first { $0.hasName("VARY") }?.value == "*")
        #expect(fields.contains("x-a"))
        #expect(!fields.contains(.other))
        #expect(fields == HTTPFields([("X-A", "1"), ("transfer-ENCODING", "chunked"), ("Vary", "*")]))
    }
}
