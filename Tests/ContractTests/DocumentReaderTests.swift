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
            floats: [12.5, -0.5, 1e3, .5]
            strings: [1_000, 2026-11-25, '1:30', "true", 0b101, .inf]
            """)
        XCTAssertEqual(root["words"]?.json, #"["yes","no","on","off","Yes","ON","y","n"]"#)
        XCTAssertEqual(root["booleans"]?.json, "[true,true,true,false,false,false]")
        XCTAssertEqual(root["nulls"]?.json, "[null,null,null]")
        XCTAssertEqual(root["empty"], .null)
        XCTAssertEqual(root["integers"]?.json, "[0,-7,12,123,31,15]")
        XCTAssertEqual(root["floats"]?.items?.map { $0.number != nil }, [true, true, true, true])
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
        XCTAssertThrowsError(try read("a:\n  <<: 5\n")) { error in
            XCTAssertTrue("\(error)".contains("a merge key (<<) takes a mapping"), "\(error)")
        }
    }
}
