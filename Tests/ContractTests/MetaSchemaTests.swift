import Contract
import XCTest

/// The built-in meta-schemas answer `$ref`s into them by the published definition names, as
/// schemas written against the real ones use them (the official Swagger 2.0 schema refers to
/// draft-04's `positiveInteger`, `positiveIntegerDefault0` and `stringArray`).
final class MetaSchemaTests: XCTestCase {
    func schema(_ text: String) throws -> SchemaValidator { try inlineSchema(text) }

    /// `count` and `names` checked through `base#pointer/…` for each of `names`.
    func check(_ dialect: String, count: [String], names: String, types: String, schemas: String) throws {
        var properties = count.enumerated().map { #""c\#($0.offset)": {"$ref": "\#($0.element)"}"# }
        properties.append(#""names": {"$ref": "\#(names)"}"#)
        properties.append(#""type": {"$ref": "\#(types)"}"#)
        properties.append(#""all": {"$ref": "\#(schemas)"}"#)
        let validator = try schema(
            #"{"$schema": "\#(dialect)", "type": "object", "properties": {\#(properties.joined(separator: ", "))}}"#)
        let counts = count.indices.map { #""c\#($0)": 3"# }.joined(separator: ", ")
        XCTAssertTrue(
            validator.validate(Array(#"{\#(counts), "names": ["a", "b"], "type": "string", "all": [{}]}"#.utf8)).passed,
            dialect)
        for bad in [#"{"c0": -1}"#, #"{"names": ["a", "a"]}"#, #"{"type": "text"}"#, #"{"all": 7}"#] {
            XCTAssertFalse(validator.validate(Array(bad.utf8)).passed, "\(dialect): \(bad)")
        }
    }

    func testDraft04DefinitionNames() throws {
        let base = "http://json-schema.org/draft-04/schema#/definitions/"
        try check(
            "http://json-schema.org/draft-04/schema#",
            count: [base + "positiveInteger", base + "positiveIntegerDefault0"],
            names: base + "stringArray", types: base + "simpleTypes", schemas: base + "schemaArray")
    }

    func testDraft06And07DefinitionNames() throws {
        for draft in ["draft-06", "draft-07"] {
            let base = "http://json-schema.org/\(draft)/schema#/definitions/"
            try check(
                "http://json-schema.org/\(draft)/schema#",
                count: [base + "nonNegativeInteger", base + "nonNegativeIntegerDefault0"], names: base + "stringArray",
                types: base + "simpleTypes", schemas: base + "schemaArray")
        }
    }

    func test2019And2020DefinitionNames() throws {
        for draft in ["2019-09", "2020-12"] {
            let validation = "https://json-schema.org/draft/\(draft)/meta/validation#/$defs/"
            try check(
                "https://json-schema.org/draft/\(draft)/schema",
                count: [validation + "nonNegativeInteger", validation + "nonNegativeIntegerDefault0"],
                names: validation + "stringArray", types: validation + "simpleTypes",
                schemas: "https://json-schema.org/draft/\(draft)/meta/applicator#/$defs/schemaArray")
        }
        // 2020-12's core names its string kinds.
        let core = "https://json-schema.org/draft/2020-12/meta/core#/$defs/"
        let validator = try schema(
            #"{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"a": {"$ref": "\#(core)anchorString"}, "u": {"$ref": "\#(core)uriString"}, "r": {"$ref": "\#(core)uriReferenceString"}}}"#
        )
        XCTAssertTrue(validator.validate(Array(##"{"a": "item", "u": "https://x.test/", "r": "#/a"}"##.utf8)).passed)
        XCTAssertFalse(validator.validate(Array(#"{"a": "1item"}"#.utf8)).passed)
    }
}
