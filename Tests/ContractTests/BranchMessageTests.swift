import Contract
import XCTest

/// When no branch of an `anyOf` or `oneOf` (without a discriminator) fits, the violation says
/// why the closest one failed: the one that got furthest into the value, not a branch of
/// another type.
final class BranchMessageTests: XCTestCase {
    func schema(_ text: String) throws -> SchemaValidator { try inlineSchema(text, formats: .assert) }

    func testTheClosestBranchSaysWhyNoneMatched() throws {
        let validator = try schema(
            #"""
            {"type": "object", "properties": {
              "shutdown": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
              "droplet": {"oneOf": [
                {"type": "object", "required": ["name"], "properties": {"name": {"pattern": "^[a-z]+$"}}},
                {"type": "object", "required": ["names"]}]}}}
            """#)
        let verdict = validator.validate(Array(#"{"shutdown": "2023-13-45", "droplet": {"name": "BAD NAME"}}"#.utf8))
        XCTAssertEqual(
            verdict.violations.map(\.found),
            [
                #"none matched; closest: /shutdown format: expected a valid date, found "2023-13-45""#,
                #"none matched; closest: /droplet/name pattern: expected a string matching ^[a-z]+$, found "BAD NAME""#,
            ])
        XCTAssertTrue(validator.validate(Array(#"{"shutdown": null, "droplet": {"names": []}}"#.utf8)).passed)
        // Depth counts segments, not characters: `/a/b` got further than `/aVeryLongPropertyName`.
        let deep = try schema(
            #"{"anyOf": [{"required": ["aVeryLongPropertyName"]}, {"properties": {"a": {"properties": {"b": {"type": "integer"}}}}, "required": ["a"]}]}"#
        )
        XCTAssertEqual(
            deep.validate(Array(#"{"a": {"b": "x"}}"#.utf8)).violations.first?.found,
            #"none matched; closest: /a/b type: expected integer, found string"#)
        // Two matched: nothing to explain.
        let both = validator.validate(Array(#"{"droplet": {"name": "ok", "names": []}}"#.utf8))
        XCTAssertEqual(both.violations.map(\.found), ["2 matched"])
    }
}
