import Contract
import XCTest

final class DocumentReaderTests: XCTestCase {
    func read(_ yaml: String) throws -> Value {
        try SourceDocument.read(text: yaml, uri: "file:///api.yaml").root
    }

    /// YAML 1.2's core schema (OpenAPI's recommendation), not YAML 1.1's: `yes`, `on`… are words.
    /// A finding about one of the root's scalars (`jsonSchemaDialect`) points at its line, in
    /// YAML and JSON; deeper scalars take their object's (lines are kept per object, not per value).
    func testTheRootsScalarsHaveLinesOfTheirOwn() throws {
        let yaml = try SourceDocument.read(
            text: "openapi: 3.1.0\ninfo:\n  title: t\n  version: '1'\njsonSchemaDialect: x\n", uri: "file:///api.yaml")
        XCTAssertEqual(yaml.line(of: "/jsonSchemaDialect"), 5)
        XCTAssertEqual(yaml.line(of: "/info/title"), 3)
        let json = try SourceDocument.read(
            text: "{\n\"openapi\": \"3.1.0\",\n\"info\": {\"title\": \"t\"},\n\"jsonSchemaDialect\": \"x\"\n}",
            uri: "file:///api.json")
        XCTAssertEqual(json.line(of: "/jsonSchemaDialect"), 4)
        XCTAssertEqual(json.line(of: "/openapi"), 2)
    }

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

    /// A file's place is said as its path on disk, not as its URI's percent-encoded form.
    func testPlacesNameFilesAsOnDisk() {
        let error = ContractError(file: "file:///tmp/sub%20dir/my%20s%C3%A9.yaml", line: 3, pointer: "/x", message: "m")
        XCTAssertEqual(error.description, "/tmp/sub dir/my sé.yaml:3 #/x: m")
        XCTAssertEqual(SourcePlace(file: "file:///a%20b.yaml", line: nil, pointer: "").path, "/a b.yaml")
        XCTAssertEqual(ContractError.shownPath("https://x.test/a%20b.yaml"), "https://x.test/a%20b.yaml")
    }

    /// A byte order mark may start a YAML stream (YAML 1.2 §5.2), as it may start JSON text.
    func testAByteOrderMarkStartsYAMLAndJSON() throws {
        let yaml = try read("\u{FEFF}openapi: 3.0.3\ninfo: {title: t, version: '1'}\n")
        XCTAssertEqual(yaml["openapi"]?.json, #""3.0.3""#)
        XCTAssertEqual(try read("\u{FEFF}{\"openapi\": \"3.1.0\"}")["openapi"]?.json, #""3.1.0""#)
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

    /// The message of the error reading `text` gives, or `nil` when it reads.
    func failure(_ text: String) -> String? {
        do {
            _ = try SourceDocument.read(text: text, uri: "file:///api.yaml")
            return nil
        } catch {
            return error.message
        }
    }

    /// Text nested far deeper than a thread's stack would hold if read recursively (the process
    /// used to end): a clear error for JSON, for YAML flow and block collections alike.
    func testDeepNestingIsAnErrorNotACrash() {
        for depth in [600, 12_000] {
            let json = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            XCTAssertEqual(failure(json), "nested deeper than 512", "JSON \(depth) deep")
            XCTAssertEqual(failure("a: " + json), "nested deeper than 512", "YAML flow \(depth) deep")
            let objects = String(repeating: "{a: ", count: depth) + "1" + String(repeating: "}", count: depth)
            XCTAssertEqual(failure("x: " + objects), "nested deeper than 512", "YAML flow mappings \(depth) deep")
        }
        let dashes = "x:\n" + String(repeating: "- ", count: 2_000) + "1\n"
        XCTAssertEqual(failure(dashes), "nested deeper than 512", "compact block sequences on one line")
        let indented =
            (0..<3_000).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n") + " 1\n"
        XCTAssertEqual(failure(indented), "nested deeper than 512", "block mappings by indentation")
        XCTAssertEqual(
            failure("a: " + String(repeating: "[", count: 60_000)),
            "may nest 60004 levels deep (opening brackets, indentation): refused, as documents are read 512 deep")
    }

    /// A chain of aliases in block form (`a1: &a1` then `- *a0`, repeated) composes into a tree
    /// as deep as the chain while the text nests two levels: reading stops 512 deep, and letting
    /// the tree go (which recurses as deep as it is) no longer ends the process.
    func testAliasChainsAreAnErrorNotACrash() {
        var chain = "x:\n  a0: &a0 1\n"
        for link in 1..<100_000 { chain += "  a\(link): &a\(link)\n    - *a\(link - 1)\n" }
        XCTAssertEqual(failure(chain), "nested deeper than 512")
    }

    /// A few hundred bytes of aliases that expand to billions of values are refused at once;
    /// ordinary reuse of anchors reads.
    func testAliasExpansionIsBoundedByTheTextsSize() throws {
        var bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            let refs = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            bomb += "a\(level): &a\(level) [\(refs)]\n"
        }
        let started = ContinuousClock.now
        XCTAssertEqual(
            failure(bomb), "its aliases expand to more values than its size allows (a \"billion laughs\" document?)")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
        var shared = "base: &base {type: object, properties: {id: {type: integer}, name: {type: string}}}\n"
        for index in 0..<200 { shared += "s\(index): *base\n" }
        let root = try read(shared)
        XCTAssertEqual(root["s199"], root["base"])
    }
}
