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
