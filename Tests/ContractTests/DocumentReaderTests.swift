import Contract
import XCTest

final class DocumentReaderTests: XCTestCase {
    func read(_ yaml: String) throws -> Value {
        try SourceDocument.read(text: yaml, uri: "file:///api.yaml").root
    }

    /// YAML 1.2's core schema (OpenAPI's recommendation), not YAML 1.1's: `yes`, `on`… are words.
    func testScalarsFollowTheCoreSchema() throws {
        let root = try read(
            """
            words: [yes, no, on, off, Yes, ON, y, n]
            booleans: [true, True, TRUE, false, False, FALSE]
            nulls: [null, Null, ~]
            empty:
            integers: [0, -7, +12, 0123, 0x1F, 0o17]
            floats: [12.5, -0.5, 1e3, .5, +1.5, 1., 1.e3, 01.5, -.5]
            strings: [1_000, 2026-11-25, '1:30', "true", 0b101, .inf]
            """)
        XCTAssertEqual(root["words"]?.json, #"["yes","no","on","off","Yes","ON","y","n"]"#)
        XCTAssertEqual(root["booleans"]?.json, "[true,true,true,false,false,false]")
        XCTAssertEqual(root["nulls"]?.json, "[null,null,null]")
        XCTAssertEqual(root["empty"], .null)
        XCTAssertEqual(root["integers"]?.json, "[0,-7,12,123,31,15]")
        // Spelled the YAML way, read as the numbers JSON spells: .5 is 0.5, 1. is 1, +1.5 is 1.5.
        XCTAssertEqual(
            root["floats"]?.items?.map(\.number),
            ["12.5", "-0.5", "1e3", "0.5", "1.5", "1", "1e3", "1.5", "-0.5"].map { Number(text: Array($0.utf8)) })
        XCTAssertEqual(root["strings"]?.json, #"["1_000","2026-11-25","1:30","true","0b101",".inf"]"#)
    }

    func testMergeKeysApplyWithTheMappingsOwnKeysWinning() throws {
        let root = try read(
            """
            base: &base
              type: object
              required: [id]
              properties: { id: { type: integer } }
            named: &named
              required: [name]
              title: Named
            item:
              <<: *base
              title: Item
            both:
              <<: [*named, *base]
            quoted:
              "<<": not a merge
            """)
        XCTAssertEqual(root["item"]?["type"]?.string, "object")
        XCTAssertEqual(root["item"]?["required"]?.json, #"["id"]"#)
        XCTAssertEqual(root["item"]?["title"]?.string, "Item")
        XCTAssertNil(root["item"]?["<<"])
        // In a list, the earlier mapping wins.
        XCTAssertEqual(root["both"]?["required"]?.json, #"["name"]"#)
        XCTAssertEqual(root["both"]?["type"]?.string, "object")
        XCTAssertEqual(root["quoted"]?["<<"]?.string, "not a merge")
        // A mapping's own key keeps its line when a merged one has the same name.
        let document = try SourceDocument.read(
            text: "base: &base\n  info: {a: 1}\nitem:\n  info: {b: 2}\n  <<: *base\n", uri: "file:///api.yaml")
        XCTAssertEqual(document.line(of: "/item/info"), 4)
        XCTAssertThrowsError(try read("a:\n  <<: 5\n")) { error in
            XCTAssertTrue("\(error)".contains("a merge key (<<) takes a mapping"), "\(error)")
        }
    }
}
