import Testing

@testable import Sluice

@Suite("The paths of removed nulls")
struct NullPathsTests {
    static func paths(_ json: String, _ mode: NullStripper.Mode = .members) -> [String] {
        NullPaths.list(Array(json.utf8), mode: mode)
    }

    @Test("Members by name (odd names quoted), array elements only when they go too; not JSON: none")
    func paths() {
        let document = #"{"a":1,"b":null,"c":[null,{"d":null,"e":"null"}],"odd key":null , "f" : { "g" : null }}"#
        #expect(Self.paths(document) == ["$.b", "$.c[1].d", #"$["odd key"]"#, "$.f.g"])
        #expect(Self.paths(document, .all) == ["$.b", "$.c[0]", "$.c[1].d", #"$["odd key"]"#, "$.f.g"])
        #expect(Self.paths(#"{"nullable":"x","n":nullx}"#).isEmpty)
        #expect(Self.paths(#"{"a":"#).isEmpty)
        #expect(Self.paths("[null, null]", .all) == ["$[0]", "$[1]"])
        #expect(NullPaths.list(Array(#"{"k":[null,null,null]}"#.utf8), mode: .all, limit: 2) == ["$.k[0]", "$.k[1]"])
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(Self.paths(deep).isEmpty)
    }
}
