import Contract
import Foundation
import XCTest

/// `$ref` wherever OpenAPI expects an object, across files (Tests/Fixtures/contracts/catalog: every
/// operation in a file of its own, as large public descriptions are laid out), and cycles.
final class OpenAPILoaderTests: XCTestCase {
    static let catalogFile = OpenAPITests.fixtures.appendingPathComponent("catalog/openapi.yaml").path

    func testOperationsNamedByRefLoadWithEverythingTheyReference() throws {
        // Given a description whose paths name operations, path items, responses, parameters,
        // headers, request bodies, media types, examples, links and callbacks by $ref
        let catalog = try OpenAPIContract.load(file: Self.catalogFile)

        // Then every operation is there, with its responses, and nothing was ignored
        XCTAssertEqual(
            catalog.operations.map(\.name).sorted(),
            [
                "createWidget (POST /widgets)", "deleteWidget (DELETE /widgets/{widget_id})",
                "getWidget (GET /widgets/{widget_id})", "listTags (GET /tags)", "listWidgets (GET /widgets)",
            ])
        XCTAssertEqual(catalog.warnings.map(\.description), [])
        XCTAssertEqual(catalog.summary, ContractSummary(operations: 5, withResponseSchemas: 5, warnings: 0))
        XCTAssertEqual(catalog.findings.map(\.description), [])
        // An operation's place is its own file
        let list = try XCTUnwrap(catalog.operation(id: "listWidgets"))
        XCTAssertTrue(list.place.path.hasSuffix("catalog/resources/widgets/list.yml"), list.place.description)
        XCTAssertEqual(list.place.pointer, "")
        let get = try XCTUnwrap(catalog.operation(id: "getWidget"))
        XCTAssertTrue(get.place.path.hasSuffix("catalog/resources/widgets/get.yml"), get.place.description)
    }

    /// A schema in a file above the contract's folder is named from there (`../common/…`), not
    /// by the machine's absolute path (which a problem sent to a client would otherwise show).
    func testASchemaAboveTheContractsFolderIsNamedRelativeToIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-up-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("spec"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("common"), withIntermediateDirectories: true)
        try """
        openapi: 3.0.3
        info: {title: t, version: '1'}
        paths:
          /e:
            get:
              responses:
                '500':
                  description: e
                  content: {application/json: {schema: {$ref: '../common/error.yaml'}}}
        """.write(to: root.appendingPathComponent("spec/api.yaml"), atomically: true, encoding: .utf8)
        try "type: object\nproperties: {code: {type: integer}}\n".write(
            to: root.appendingPathComponent("common/error.yaml"), atomically: true, encoding: .utf8)
        let contract = try OpenAPIContract.load(file: root.appendingPathComponent("spec/api.yaml").path)
        let schema = try XCTUnwrap(
            contract.checkResponse(
                method: "GET", path: "/e", status: 500, headers: [("content-type", "application/json")]
            )
            .bodySchema)
        let violation = try XCTUnwrap(schema.validate(Array(#"{"code": "x"}"#.utf8)).violations.first)
        XCTAssertEqual(violation.schema, "../common/error.yaml#/properties/code")
    }

    func testResponsesOfReferencedOperationsAreChecked() throws {
        let catalog = try OpenAPIContract.load(file: Self.catalogFile)
        // A header from a shared file is required
        var check = catalog.checkResponse(
            method: "GET", path: "/v1/widgets", status: 200, headers: [("content-type", "application/json")])
        XCTAssertEqual(check.operation, "listWidgets (GET /widgets)")
        XCTAssertEqual(check.violations.map(\.pointer), ["header:X-Total"])
        // The body schema comes through the response file, the model file and its recursion
        let page = try XCTUnwrap(check.bodySchema)
        XCTAssertTrue(
            page.validate(
                Array(
                    #"{"widgets": [{"id": 1, "name": "A", "price": 1, "parts": [{"id": 2, "name": "B", "price": 0}]}], "links": {}}"#
                        .utf8)
            ).passed)
        let nested = page.validate(
            Array(
                #"{"widgets": [{"id": 1, "name": "A", "price": 1, "parts": [{"id": 2, "price": 0}]}], "links": {}}"#
                    .utf8))
        XCTAssertEqual(nested.violations.map(\.pointer), ["/widgets/0/parts/0"])
        // default from a shared responses file, and a response that is a $ref to a $ref
        check = catalog.checkResponse(
            method: "GET", path: "/v1/widgets", status: 503, headers: [("content-type", "application/json")])
        XCTAssertFalse(try XCTUnwrap(check.bodySchema).validate(Array(#"{"id": "x"}"#.utf8)).passed)
        check = catalog.checkResponse(
            method: "DELETE", path: "/v1/widgets/9", status: 404, headers: [("content-type", "application/json")])
        XCTAssertEqual(check.operation, "deleteWidget (DELETE /widgets/{widget_id})")
        XCTAssertFalse(try XCTUnwrap(check.bodySchema).validate(Array(#"{"id": "x"}"#.utf8)).passed)
        // A media type object by $ref, for a response and for a request body
        check = catalog.checkResponse(
            method: "POST", path: "/v1/widgets", status: 201, headers: [("content-type", "application/json")])
        XCTAssertFalse(
            try XCTUnwrap(check.bodySchema).validate(Array(#"{"id": 0, "name": "x", "price": 1}"#.utf8)).passed)
        let create = try XCTUnwrap(catalog.operation(id: "createWidget"))
        let request = try XCTUnwrap(catalog.requestSchema(of: create))
        XCTAssertFalse(request.validate(Array(#"{"name": "x"}"#.utf8), direction: .request).passed)
        // Path-item parameters from a shared file
        let bad = catalog.checkRequest(
            method: "GET", path: "/v1/widgets/0", query: "per_page=500", headers: [], hasBody: false)
        XCTAssertEqual(bad.violations.count, 1, "\(bad.violations)")
        let list = catalog.checkRequest(
            method: "GET", path: "/v1/widgets", query: "per_page=500", headers: [], hasBody: false)
        XCTAssertEqual(list.violations.map(\.keyword), ["maximum"])
    }

    /// Every example the description carries passes its schema, and every mutation of one (a
    /// value, at any depth, replaced by one of another type) is caught.
    func testEveryExamplePassesAndEveryMutationIsCaught() throws {
        let catalog = try OpenAPIContract.load(file: Self.catalogFile)
        let directory = OpenAPITests.fixtures.appendingPathComponent("catalog/shared")
        func example(_ file: String, _ path: [String]) throws -> Value {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            var value = try SourceDocument.read(text: text, uri: "file:///x").root
            for key in path { value = try XCTUnwrap(value[key]) }
            return value
        }
        let page = try XCTUnwrap(
            catalog.checkResponse(
                method: "GET", path: "/v1/widgets", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        let widget = try XCTUnwrap(catalog.requestSchema(of: try XCTUnwrap(catalog.operation(id: "createWidget"))))
        var mutations = 0
        for (schema, value) in [
            (page, try example("examples.yml", ["widget_page", "value"])),
            (widget, try example("media.yml", ["widget", "example"])),
        ] {
            XCTAssertTrue(schema.validate(Array(value.json.utf8)).passed, value.json)
            for mutant in Self.mutations(of: value) {
                mutations += 1
                XCTAssertFalse(schema.validate(Array(mutant.json.utf8)).passed, "not caught: \(mutant.json)")
            }
        }
        XCTAssertGreaterThan(mutations, 10)
    }

    func testAPropertiesMapNamedByRefIsReadFromItsFile() throws {
        // `properties: {$ref: attributes.yml#/sprocket_sizes}`: a JSON Reference to the map
        let sprocket = try SchemaValidator.load(
            file: OpenAPITests.fixtures.appendingPathComponent("catalog/models/sprocket.yml").path)
        XCTAssertTrue(sprocket.validate(Array(#"{"teeth": 12, "pitch_mm": 0.5}"#.utf8)).passed)
        let verdict = sprocket.validate(Array(#"{"teeth": 2, "pitch_mm": 0}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.pointer), ["/teeth", "/pitch_mm"])
        XCTAssertTrue(verdict.violations.first?.schema.hasSuffix("attributes.yml#/sprocket_sizes/teeth") == true)
    }

    func testARefCycleIsAnErrorThatNamesTheCycle() throws {
        XCTAssertThrowsError(
            try OpenAPIContract.load(file: OpenAPITests.fixtures.appendingPathComponent("cycle.yaml").path)
        ) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("a $ref cycle: "), text)
            XCTAssertTrue(text.contains("cycle.yaml#/components/responses/A"), text)
            XCTAssertTrue(text.contains("cycle.yaml#/components/responses/B"), text)
        }
    }

    func testEveryBrokenOperationIsSaidInFileOrderNotOnlyOne() throws {
        // Three operations, each broken its own way, the last in two of its schemas: all four are
        // said, in the order written.
        func operation(_ path: String, _ schema: String) -> String {
            "  \(path):\n    get:\n      responses:\n        '200':\n          description: x\n          content:\n            application/json:\n              schema: \(schema)\n"
        }
        let text =
            "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n"
            + operation("/b", "{$ref: '#/components/schemas/Missing'}")
            + operation("/c", "{type: object, properties: {n: {type: number, multipleOf: 0}}}")
            + operation(
                "/a",
                "{type: object, properties: {n: {type: number, maximum: x}, m: {type: string, pattern: 5}}}"
            )
        XCTAssertThrowsError(try OpenAPITests.load(yaml: text)) { thrown in
            guard let error = thrown as? ContractError else { return XCTFail("\(thrown)") }
            XCTAssertEqual(error.others.count, 3, "\(error)")
            let lines = [error.line] + error.others.map(\.line)
            XCTAssertEqual(lines, lines.sorted { ($0 ?? 0) < ($1 ?? 0) })
            XCTAssertTrue(error.description.contains("(and 3 more errors"), error.description)
        }
    }

    func testBooleanExclusiveBoundsIn31AreReadAs30WithAWarning() throws {
        // OpenAI's 3.1 description writes `minimum: 0, exclusiveMinimum: true` (3.0's form).
        let contract = try OpenAPITests.document(
            "3.1.0",
            schema:
                "{type: object, properties: {n: {type: number, minimum: 0, exclusiveMinimum: true}, m: {type: number, maximum: 1, exclusiveMaximum: false}, k: {type: number, exclusiveMaximum: 5}}}"
        )
        let said = contract.warnings.filter { $0.message.contains("with a boolean is the draft-04") }
        XCTAssertEqual(said.count, 2, "\(contract.warnings)")
        let schema = try OpenAPITests.bodySchema(contract)
        func violations(_ body: String) throws -> [String] {
            schema.validate(Array(body.utf8)).violations.map(\.keyword)
        }
        XCTAssertEqual(try violations(#"{"n": 0}"#), ["exclusiveMinimum"])
        XCTAssertEqual(try violations(#"{"n": 0.5, "m": 1, "k": 4}"#), [])
        XCTAssertEqual(try violations(#"{"m": 1.5}"#), ["maximum"])
        XCTAssertEqual(try violations(#"{"k": 5}"#), ["exclusiveMaximum"])
    }

    func testNamesThatAreFixedFieldsElsewhereAreNames() throws {
        // Stripe: `encoding: {description: {style: deepObject}}`; Linode: a schema `description`.
        let contract = try OpenAPITests.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1', description: [not, a, string]}
                paths:
                  /x:
                    post:
                      requestBody:
                        content:
                          application/x-www-form-urlencoded:
                            schema: {type: object, properties: {description: {type: string}}}
                            encoding: {description: {style: deepObject, explode: true}}
                      responses:
                        '200':
                          description: ok
                          headers: {summary: {schema: {type: integer}}}
                          content: {application/json: {schema: {$ref: '#/components/schemas/description'}}}
                components:
                  schemas:
                    description: {type: string, maxLength: 3}
                    title: {type: integer}
                """)
        let said = contract.warnings.filter { $0.message.hasSuffix("should be a string (ignored)") }
        XCTAssertEqual(said.map(\.pointer), ["/info/description"], "\(contract.warnings)")
    }

    func testThreeOneTypeFormsInA30DocumentAreWarned() throws {
        let contract = try OpenAPITests.document(
            "3.0.3", schema: "{type: object, properties: {a: {type: [string, 'null']}, b: {type: 'null'}}}")
        let messages = contract.warnings.map(\.message)
        XCTAssertTrue(messages.contains { $0.hasPrefix("type as a list is OpenAPI 3.1's form") }, "\(messages)")
        XCTAssertTrue(
            messages.contains {
                $0.hasPrefix("type: \"null\" is not a type of OpenAPI 3.0 (it writes nullable: true)")
            }, "\(messages)")
    }

    /// What openapi-spec-validator refuses in OpenAI's and PagerDuty's descriptions: a name
    /// `required` twice, a `default` of another type. Said; the verdicts are unchanged.
    func testRepeatedRequiredNamesAndDefaultsOfAnotherTypeAreWarned() throws {
        for version in ["3.0.3", "3.1.0"] {
            let contract = try OpenAPITests.document(
                version,
                schema:
                    "{type: object, required: [id, name, id], properties: {id: {type: string}, name: {type: string}, "
                    + "limit: {type: integer, default: '20 - incident_summary'}, ratio: {type: number, default: 1}, "
                    + "page: {type: integer, default: 2.0}, note: {type: string, nullable: true, default: null}}}")
            let messages = contract.warnings.map(\.message)
            XCTAssertTrue(
                messages.contains { $0.hasPrefix("required names \"id\" more than once") }, "\(version) \(messages)")
            let defaults = contract.warnings.filter { $0.message.hasPrefix("default is") }
            XCTAssertEqual(
                defaults.map(\.message),
                [
                    "default is a string, not of type integer (a default should be a valid value): nothing checks it"
                ])
            XCTAssertEqual(
                defaults.map(\.pointer),
                ["/paths/~1a/get/responses/200/content/application~1json/schema/properties/limit"])
        }
    }

    func testRecursiveRefIn31IsWarned() throws {
        // OpenAI's CompoundFilter: 2019-09's keyword in a 3.1 (2020-12) schema.
        let contract = try OpenAPITests.document(
            "3.1.0", schema: "{type: object, properties: {filters: {type: array, items: {$recursiveRef: '#'}}}}")
        XCTAssertTrue(
            contract.warnings.contains { $0.message.hasPrefix("$recursiveRef is JSON Schema 2019-09's") },
            "\(contract.warnings)")
    }

    func testSchemasThatApplyEachOtherWithoutEndAreSaidAtLoad() throws {
        let contract = try OpenAPITests.document(
            "3.1.0",
            schema:
                "{type: object, properties: {loop: {$ref: '#/components/schemas/A'}, tree: {$ref: '#/components/schemas/Tree'}}}",
            components: """
                components:
                  schemas:
                    A: {$ref: '#/components/schemas/B'}
                    B: {allOf: [{$ref: '#/components/schemas/A'}]}
                    Tree: {type: object, properties: {children: {type: array, items: {$ref: '#/components/schemas/Tree'}}}}
                """)
        let loops = contract.warnings.filter { $0.message.contains("apply one another without end") }
        // One loop, said once with its path; a schema that recurses through a value (Tree) is fine.
        XCTAssertEqual(loops.count, 1, "\(contract.warnings)")
        XCTAssertTrue(
            loops.first?.message.contains("#/components/schemas/A → #/components/schemas/B") == true, "\(loops)")
        XCTAssertFalse(loops.first?.message.contains("Tree") == true)
    }

    /// Bytes that are not UTF-8 (a Latin-1 é) are refused with their line, not read as U+FFFD.
    func testADocumentThatIsNotUTF8IsRefusedWithItsLine() throws {
        var bytes = Array("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\nx-enum: [caf".utf8)
        bytes += [0xE9] + Array("]\n".utf8)
        XCTAssertThrowsError(try OpenAPITests.load(bytes: bytes)) { error in
            let failure = error as? ContractError
            XCTAssertEqual(failure?.line, 4)
            XCTAssertTrue(failure?.message.contains("not UTF-8 (byte 68)") == true, "\(error)")
        }
    }

    /// A chain without a loop but longer than the validator follows is said as a chain, and
    /// its failure says "loop, or … more than 128 deep", not only "loop".
    func testAChainOfReferencesLongerThan128IsSaidAsSuch() throws {
        let links = (0..<140).map { "    A\($0): {$ref: '#/components/schemas/A\($0 + 1)'}" }.joined(separator: "\n")
        let contract = try OpenAPITests.document(
            "3.1.0", schema: "{$ref: '#/components/schemas/A0'}",
            components: "components:\n  schemas:\n\(links)\n    A140: {type: integer}")
        let deep = contract.warnings.filter { $0.message.contains("levels deep ($ref or allOf chains)") }
        XCTAssertEqual(deep.count, 1, "\(contract.warnings)")
        XCTAssertFalse(contract.warnings.contains { $0.message.contains("without end") })
        let verdict = try OpenAPITests.bodySchema(contract).validate(Array("5".utf8))
        XCTAssertTrue(
            verdict.violations.first?.found.contains("more than 128 deep") == true, "\(verdict.violations)")
    }

    /// The value with one of its values, at any depth, replaced by one of another type.
    static func mutations(of value: Value) -> [Value] {
        var out: [Value] = []
        switch value {
        case .object(let members):
            for index in members.indices {
                for mutant in mutations(of: members[index].1) {
                    var changed = members
                    changed[index].1 = mutant
                    out.append(.object(changed))
                }
            }
        case .array(let items):
            for index in items.indices {
                for mutant in mutations(of: items[index]) {
                    var changed = items
                    changed[index] = mutant
                    out.append(.array(changed))
                }
            }
        default: break
        }
        out.append(otherType(value))
        return out
    }

    static func otherType(_ value: Value) -> Value {
        switch value {
        case .string: .number(Number(12345))
        case .number: .string("12345")
        case .object: .array([])
        case .array: .object([])
        case .bool: .string("true")
        case .null: .bool(false)
        }
    }
}
