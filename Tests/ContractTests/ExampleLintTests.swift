import Contract
import XCTest

/// `contract lint --examples`: a description's own examples of JSON bodies against its schemas.
final class ExampleLintTests: XCTestCase {
    func testExamplesThatBreakTheirSchemasAreFound() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1'}
                paths:
                  /pets:
                    post:
                      operationId: addPet
                      requestBody:
                        content:
                          application/json:
                            schema: {$ref: '#/components/schemas/Pet'}
                            examples:
                              good: {value: {name: Rex}}
                              withId: {value: {id: 7, name: Rex}}
                              shared: {$ref: '#/components/examples/Nameless'}
                              elsewhere: {externalValue: 'https://example.com/pet.json'}
                      responses:
                        '201':
                          description: created
                          content:
                            application/json:
                              schema: {$ref: '#/components/schemas/Pet'}
                              example: {id: 7, name: Rex}
                        '400':
                          description: bad
                          content:
                            application/json:
                              schema: {type: object, required: [detail]}
                              example: {title: oops}
                            text/plain:
                              example: not JSON
                components:
                  examples:
                    Nameless: {value: {id: 3}}
                  schemas:
                    Pet:
                      type: object
                      required: [name]
                      properties:
                        id: {type: integer, readOnly: true}
                        name: {type: string}
                """)
        let findings = contract.exampleFindings
        XCTAssertEqual(findings.map(\.severity), [.example, .example, .example])
        XCTAssertEqual(
            findings.map(\.message),
            [
                #"addPet (POST /pets) request application/json example "withId" breaks its schema: (root): readOnly: expected no property "id" in a request (readOnly), found present"#,
                #"addPet (POST /pets) request application/json example "shared" breaks its schema: (root): required: expected property "name", found absent (and 1 more)"#,
                #"addPet (POST /pets) 400 application/json example "example" breaks its schema: (root): required: expected property "detail", found absent"#,
            ])
        // Each is placed where its value is written (a shared one in components).
        XCTAssertEqual(findings[1].place?.pointer, "/components/examples/Nameless/value")
        XCTAssertEqual(findings[2].place?.pointer, "/paths/~1pets/post/responses/400/content/application~1json/example")
    }

    func testSwagger2ResponseExamplesAreChecked() throws {
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
                          schema: {type: object, properties: {n: {type: integer}}}
                          examples:
                            application/json: {n: 'one'}
                """)
        XCTAssertEqual(contract.exampleFindings.count, 1)
        XCTAssertTrue(
            contract.exampleFindings.first?.message.contains(#"/n: type: expected integer, found string"#) == true,
            "\(contract.exampleFindings)")
    }

    /// An example's numbers keep the form they are written in: a 3.0 example's `80.0` is no
    /// integer (draft-04's reading), and a 23-digit integer still is one.
    func testExampleNumbersKeepTheirForm() throws {
        let contract = try OpenAPITests.document(
            "3.0.3",
            schema: """
                {type: object, properties: {port: {type: integer}}}
                              examples:
                                fraction: {value: {port: 80.0}}
                                big: {value: {port: 10000000000000000000000}}
                                plain: {value: {port: 80}}
                """)
        XCTAssertEqual(
            contract.exampleFindings.map(\.message),
            [
                #"(GET /a) 200 application/json example "fraction" breaks its schema: /port: type: expected integer, found number"#
            ])
    }
}
