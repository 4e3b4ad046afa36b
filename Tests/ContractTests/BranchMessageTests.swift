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
        // Two matched: which, by where they are written.
        let both = validator.validate(Array(#"{"droplet": {"name": "ok", "names": []}}"#.utf8))
        XCTAssertEqual(
            both.violations.map(\.found), ["2 matched: #/properties/droplet/oneOf/0, #/properties/droplet/oneOf/1"])
    }

    func testATaggedUnionsOtherVariantsAndOtherShapesSayLess() throws {
        // A card that breaks only a card rule: the bank branch's `const` says the value is no
        // bank account, the card branch says what is wrong; at the root and one level down.
        let card =
            #"{"object": {"const": "card"}, "cvc": {"type": "string", "maxLength": 4}, "exp_month": {"type": "integer"}}"#
        let bank = #"{"object": {"const": "bank_account"}, "routing": {"type": "string"}}"#
        let variants = [
            #"{"type": "object", "properties": \#(bank), "required": ["object", "routing"]}"#,
            #"{"type": "object", "properties": \#(card), "required": ["object"]}"#,
        ]
        let body = #"{"object": "card", "cvc": "12345", "exp_month": 12}"#
        for union in [variants, variants.reversed()].map({ #"{"oneOf": [\#($0.joined(separator: ", "))]}"# }) {
            let payment = try schema(#"{"type": "object", "properties": {"source": \#(union)}}"#)
            XCTAssertEqual(
                try schema(union).validate(Array(body.utf8)).violations.first?.found,
                #"none matched; closest: /cvc maxLength: expected at most 4 characters, found 5"#)
            XCTAssertEqual(
                payment.validate(Array(#"{"source": \#(body)}"#.utf8)).violations.first?.found,
                #"none matched; closest: /source/cvc maxLength: expected at most 4 characters, found 5"#)
        }
        // A job of the usual kind with a bad member, beside a kind that allows no `runs-on`: the
        // member that kind refuses says less than the usual kind's broken rule, found earlier.
        let job = try schema(
            #"""
            {"oneOf": [
              {"type": "object", "required": ["runs-on"], "properties": {"runs-on": {"type": "string"},
               "timeout-minutes": {"type": "number"}}},
              {"type": "object", "required": ["uses"], "properties": {"uses": {"type": "string"}},
               "additionalProperties": false}]}
            """#)
        XCTAssertEqual(
            job.validate(Array(#"{"runs-on": "linux", "timeout-minutes": "ten"}"#.utf8)).violations.first?.found,
            #"none matched; closest: /timeout-minutes type: expected number, found string"#)
    }

    func testAnEnumOfSeveralValuesIsARuleNotATag() throws {
        // A status outside its enum says more than the other branch's missing member; a one-value
        // enum (OpenAPI 3.0's tag) says less, like a const.
        let result = try schema(
            #"{"oneOf": [{"type": "object", "properties": {"status": {"enum": ["a", "b"]}}}, {"type": "object", "required": ["error"]}]}"#
        )
        XCTAssertEqual(
            result.validate(Array(#"{"status": "c"}"#.utf8)).violations.first?.found,
            #"none matched; closest: /status enum: expected one of ["a", "b"], found "c""#)
        let tagged = try schema(
            #"{"oneOf": [{"type": "object", "properties": {"kind": {"enum": ["bank"]}}, "required": ["kind", "iban"]}, {"type": "object", "properties": {"kind": {"enum": ["card"]}, "cvc": {"maxLength": 4}}}]}"#
        )
        XCTAssertEqual(
            tagged.validate(Array(#"{"kind": "card", "cvc": "12345"}"#.utf8)).violations.first?.found,
            #"none matched; closest: /cvc maxLength: expected at most 4 characters, found 5"#)
    }

    func testTwoMatchedSaysSo() throws {
        let validator = try schema(
            #"{"properties": {"droplet": {"oneOf": [{"required": ["name"]}, {"required": ["names"]}]}}}"#)
        let both = validator.validate(Array(#"{"droplet": {"name": "ok", "names": []}}"#.utf8))
        XCTAssertEqual(
            both.violations.map(\.found), ["2 matched: #/properties/droplet/oneOf/0, #/properties/droplet/oneOf/1"])
    }

    /// Branches that do not exclude each other fail a body that fits both, whatever a
    /// discriminator says (OAS 3.1.1 §4.8.25: it does not change the outcome): the violation names
    /// the matching schemas and the one the discriminator's value names.
    func testOverlappingBranchesUnderADiscriminatorAreNamed() throws {
        let contract = try OpenAPITests.document(
            "3.0.3",
            schema: """
                {oneOf: [{$ref: '#/components/schemas/OptionOne'}, {$ref: '#/components/schemas/OptionTwo'}],
                 discriminator: {propertyName: discrim, mapping: {'Option One': '#/components/schemas/OptionOne', 'Option Two': '#/components/schemas/OptionTwo'}}}
                """,
            components: """
                components:
                  schemas:
                    OptionOne: {type: object, required: [discrim], properties: {discrim: {type: string}, optionone: {type: number}}}
                    OptionTwo: {type: object, required: [discrim], properties: {discrim: {type: string}, optiontwo: {type: string}}}
                """)
        // The description says so when it loads (`contract lint`).
        XCTAssertEqual(
            contract.warnings.map(\.message).filter { $0.contains("not told apart") },
            [
                "oneOf branches #/components/schemas/OptionOne and #/components/schemas/OptionTwo are not told apart (neither fixes discrim with enum or const, and one requires no property the other does not): a body that fits both fails oneOf, whatever discrim says (a discriminator does not choose); fix discrim in each branch, or use anyOf"
            ])
        let validator = try OpenAPITests.bodySchema(contract)
        let verdict = validator.validate(Array(#"{"discrim": "Option One", "optionone": 1}"#.utf8))
        XCTAssertEqual(
            verdict.violations.map(\.found),
            [
                #"2 matched: #/components/schemas/OptionOne, #/components/schemas/OptionTwo (discrim "Option One" names #/components/schemas/OptionOne; a discriminator does not choose)"#
            ])
        // (A oneOf is never on the fast lane: this is the general engine's message alone.)
        XCTAssertFalse(validator.usesFastLane)
    }

    /// Branches told apart (a fixed property, a property only one requires, through an heir's
    /// allOf too) load without that warning.
    func testBranchesToldApartAreNotWarnedAbout() throws {
        for components in [
            """
            OptionOne: {type: object, properties: {discrim: {enum: [Option One]}}}
            OptionTwo: {type: object, properties: {discrim: {enum: [Option Two]}}}
            """,
            """
            OptionOne: {type: object, required: [discrim, optionone]}
            OptionTwo: {type: object, required: [discrim, optiontwo]}
            """,
            """
            Base: {type: object, required: [discrim]}
            OptionOne: {allOf: [{$ref: '#/components/schemas/Base'}, {required: [optionone]}]}
            OptionTwo: {allOf: [{$ref: '#/components/schemas/Base'}, {properties: {discrim: {const: Option Two}}}]}
            """,
        ] {
            let contract = try OpenAPITests.document(
                "3.0.3",
                schema: """
                    {oneOf: [{$ref: '#/components/schemas/OptionOne'}, {$ref: '#/components/schemas/OptionTwo'}],
                     discriminator: {propertyName: discrim}}
                    """,
                components: "components:\n  schemas:\n"
                    + components.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
            XCTAssertEqual(contract.warnings.map(\.message).filter { $0.contains("not told apart") }, [], components)
        }
    }
}
