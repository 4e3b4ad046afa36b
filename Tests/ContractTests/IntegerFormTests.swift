import Contract
import XCTest

/// `integer` as each dialect defines it: draft-04 (and so OpenAPI 3.0 and Swagger 2.0) by the
/// number's form, no fraction or exponent; draft-06 and later (OpenAPI 3.1) by its value.
final class IntegerFormTests: XCTestCase {
    func testOpenAPI30ReadsIntegersByTheirForm() throws {
        let integer = try OpenAPITests.bodySchema(OpenAPITests.document("3.0.3", schema: "{type: integer}"))
        for text in ["80", "-3", "0", "123456789012345678901234567890"] {
            XCTAssertTrue(integer.validate(Array(text.utf8)).passed, text)
        }
        for text in ["80.0", "1e2", "1E2", "-0.0", "80.5"] {
            let verdict = integer.validate(Array(text.utf8))
            XCTAssertEqual(verdict.violations.map(\.keyword), ["type"], text)
            XCTAssertEqual(verdict.violations.first?.found, "number", text)
        }
        // The general engine (the one the fast one hands a failure to) agrees.
        XCTAssertEqual(integer.validateWithGeneralEngine(Array("80.0".utf8)).violations.map(\.keyword), ["type"])
        XCTAssertTrue(integer.validateWithGeneralEngine(Array("80".utf8)).passed)
        let nested = try OpenAPITests.bodySchema(
            OpenAPITests.document("3.0.3", schema: "{type: object, properties: {port: {type: integer, format: int32}}}")
        )
        XCTAssertTrue(nested.usesFastLane, "an inline object schema is on the fast lane")
        XCTAssertFalse(nested.validate(Array(#"{"port": 80.0}"#.utf8)).passed)
        XCTAssertFalse(nested.validateWithGeneralEngine(Array(#"{"port": 80.0}"#.utf8)).passed)
        XCTAssertTrue(nested.validate(Array(#"{"port": 80}"#.utf8)).passed)
        // A number is still a number, and an enum compares values: 80.0 equals 80.
        let number = try OpenAPITests.bodySchema(OpenAPITests.document("3.0.3", schema: "{type: number}"))
        XCTAssertTrue(number.validate(Array("80.0".utf8)).passed)
        let listed = try OpenAPITests.bodySchema(OpenAPITests.document("3.0.3", schema: "{enum: [80]}"))
        XCTAssertTrue(listed.validate(Array("80.0".utf8)).passed)
    }

    func testOpenAPI31ReadsIntegersByTheirValue() throws {
        let integer = try OpenAPITests.bodySchema(OpenAPITests.document("3.1.0", schema: "{type: integer}"))
        XCTAssertTrue(integer.validate(Array("80.0".utf8)).passed)
        XCTAssertTrue(integer.validate(Array("1e2".utf8)).passed)
        XCTAssertEqual(integer.validate(Array("80.5".utf8)).violations.first?.found, "number")
    }

    func testSwagger2AndKubernetesIntOrStringReadIntegersByTheirForm() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: t, version: '1'}
                produces: [application/json]
                paths:
                  /a:
                    get:
                      responses:
                        '200':
                          description: x
                          schema:
                            type: object
                            properties:
                              containerPort: {type: integer, format: int32}
                              targetPort: {type: string, format: int-or-string, x-kubernetes-int-or-string: true}
                """)
        let schema = try XCTUnwrap(
            contract.checkResponse(
                method: "GET", path: "/a", status: 200, headers: [("content-type", "application/json")]
            )
            .bodySchema)
        XCTAssertTrue(schema.validate(Array(#"{"containerPort": 80, "targetPort": 8080}"#.utf8)).passed)
        XCTAssertTrue(schema.validate(Array(#"{"targetPort": "http"}"#.utf8)).passed)
        let verdict = schema.validate(Array(#"{"containerPort": 80.0, "targetPort": 8080.0}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.place).sorted(), ["/containerPort", "/targetPort"])
    }

    /// readOnly in a request and writeOnly in a response (3.0), said word for word alike by the
    /// fast lane and the general engine, both ways.
    func testAccessViolationsOnBothEngines() throws {
        let schema = try OpenAPITests.bodySchema(
            OpenAPITests.document(
                "3.0.3",
                schema:
                    "{type: object, required: [id, secret], properties: {id: {type: integer, readOnly: true}, secret: {type: string, writeOnly: true}, name: {type: string}}}"
            ))
        XCTAssertTrue(schema.usesFastLane)
        let both = Array(#"{"id": 1, "secret": "s", "name": "n"}"#.utf8)
        for direction in [Direction.request, .response] {
            let fast = schema.validate(both, direction: direction)
            let general = schema.validateWithGeneralEngine(both, direction: direction)
            XCTAssertEqual(fast.violations.map(\.description), general.violations.map(\.description), "\(direction)")
            XCTAssertEqual(fast.violations.map(\.keyword), [direction == .request ? "readOnly" : "writeOnly"])
            // Located at the property that says so (the line a review marks), by both engines.
            let property = direction == .request ? "/properties/id" : "/properties/secret"
            XCTAssertEqual(fast.violations.map(\.schema), general.violations.map(\.schema))
            XCTAssertTrue(fast.violations.first?.schema.hasSuffix(property) == true, "\(fast.violations)")
        }
        // Each side's own property is required there, and allowed.
        XCTAssertTrue(schema.validate(Array(#"{"secret": "s"}"#.utf8), direction: .request).passed)
        XCTAssertTrue(schema.validate(Array(#"{"id": 1}"#.utf8), direction: .response).passed)
        // 3.1 keeps them annotations.
        let annotated = try OpenAPITests.bodySchema(
            OpenAPITests.document(
                "3.1.0", schema: "{type: object, properties: {id: {type: integer, readOnly: true}}}"))
        XCTAssertTrue(annotated.validate(Array(#"{"id": 1}"#.utf8), direction: .request).passed)
    }
}
