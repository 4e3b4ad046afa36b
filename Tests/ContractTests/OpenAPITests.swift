import Contract
import Foundation
import XCTest

/// OpenAPI documents written for these tests (Tests/Fixtures/contracts): a multi-file 3.0 shop
/// and a 3.1 library.
final class OpenAPITests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/contracts")

    static func shop() throws -> OpenAPIContract {
        try OpenAPIContract.load(file: fixtures.appendingPathComponent("shop.yaml").path)
    }

    /// A document written for a test, loaded from a folder of its own.
    static func load(yaml text: String) throws -> OpenAPIContract { try load(bytes: Array(text.utf8)) }

    /// A document of these bytes (not necessarily UTF-8), loaded from a folder of its own.
    static func load(bytes: [UInt8]) throws -> OpenAPIContract { try load(files: ["api.yaml": bytes]) }

    /// `api.yaml` of `files` (paths relative to a folder of their own, which holds them all).
    static func load(files: [String: [UInt8]]) throws -> OpenAPIContract {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-document-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, bytes) in files {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(bytes))
        }
        return try OpenAPIContract.load(file: directory.appendingPathComponent("api.yaml").path)
    }

    /// A document of one operation, `GET /a`, whose 200 JSON body is `schema` (a YAML flow
    /// mapping), with `components` (top-level YAML) beside it.
    static func document(_ version: String, schema: String, components: String = "") throws -> OpenAPIContract {
        try load(
            yaml: """
                openapi: \(version)
                info: {title: t, version: '1'}
                paths:
                  /a:
                    get:
                      responses:
                        '200':
                          description: x
                          content:
                            application/json:
                              schema: \(schema)
                \(components)

                """)
    }

    /// `GET /a`'s 200 JSON body schema in a ``document(_:schema:components:)``.
    static func bodySchema(_ contract: OpenAPIContract) throws -> SchemaValidator {
        try XCTUnwrap(
            contract.checkResponse(
                method: "GET", path: "/a", status: 200, headers: [("content-type", "application/json")]
            )
            .bodySchema)
    }

    /// An item as a response has it: its readOnly `id`, without its writeOnly `secret`.
    static let item = """
        {"id": 7, "name": "Lamp", "price": 12.5, "status": "available", "created_at": "2026-11-25T10:00:00Z",
         "tags": ["home", "light"], "category": {"name": "Home", "parent": {"name": "All"}}}
        """

    func testLoadsAMultiFileDocumentAndWarnsAboutWhatItIgnores() throws {
        let shop = try Self.shop()
        XCTAssertEqual(shop.version, "3.0.3")
        XCTAssertEqual(shop.basePath, "/v2")
        XCTAssertEqual(shop.operations.count, 6)
        XCTAssertTrue(shop.warnings.contains { $0.pointer == "/info/description" }, "\(shop.warnings)")
        XCTAssertTrue(shop.warnings.contains { $0.pointer == "/tags/0/description" }, "\(shop.warnings)")
    }

    func testPathTemplatesLiteralSegmentsWinAndTheBasePathIsRemoved() throws {
        let shop = try Self.shop()
        guard case .operation(let featured, _) = shop.match(method: "GET", path: "/v2/items/featured") else {
            return XCTFail("no match")
        }
        XCTAssertEqual(featured.id, "featuredItem")
        guard case .operation(let one, let parameters) = shop.match(method: "GET", path: "/v2/items/42?x=1") else {
            return XCTFail("no match")
        }
        XCTAssertEqual(one.id, "getItem")
        XCTAssertEqual(parameters["itemId"], "42")
        guard case .methodNotDocumented = shop.match(method: "DELETE", path: "/v2/items/42") else { return XCTFail() }
        guard case .outsideBasePath = shop.match(method: "GET", path: "/items") else { return XCTFail() }
        guard case .pathNotDocumented = shop.match(method: "GET", path: "/v2/orders") else { return XCTFail() }
    }

    func testSegmentsWithSeveralExpressions() throws {
        func operation(_ path: String, _ names: [String]) -> String {
            "  \(path):\n    get:\n      parameters:\n"
                + names.map { "        - {name: \($0), in: path, required: true, schema: {type: string}}\n" }.joined()
                + "      responses: {'200': {description: x}}\n"
        }
        let contract = try Self.load(
            yaml: "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n"
                + operation("/files/{name}.{ext}", ["name", "ext"]) + operation("/range/{from}-{to}", ["from", "to"])
                + operation("/v{major}.{minor}/x", ["major", "minor"]))
        func values(_ path: String) -> [String: String]? {
            guard case .operation(_, let parameters) = contract.match(method: "GET", path: path) else { return nil }
            return parameters
        }
        XCTAssertEqual(values("/files/readme.txt"), ["name": "readme", "ext": "txt"])
        // A parameter takes as much as lets the rest match, as `([^/]+)` would.
        XCTAssertEqual(values("/files/archive.tar.gz"), ["name": "archive.tar", "ext": "gz"])
        XCTAssertEqual(values("/range/1-5"), ["from": "1", "to": "5"])
        XCTAssertEqual(values("/v2.10/x"), ["major": "2", "minor": "10"])
        // The text around expressions, percent-encoding aside.
        XCTAssertEqual(values("/files/a%2Egz"), ["name": "a", "ext": "gz"])
        XCTAssertEqual(values("/range/1%2D5"), ["from": "1", "to": "5"])
        XCTAssertNil(values("/files/readme"))
        XCTAssertNil(values("/files/.txt"))
        XCTAssertNil(values("/range/-5"))
    }

    func testLiteralSegmentsArePercentDecodedAndAQueryInAPathIsDropped() throws {
        let contract = try Self.load(
            yaml: """
                openapi: 3.1.0
                info: {title: t, version: '1'}
                paths:
                  /items/mine: {get: {operationId: mine, responses: {'200': {description: x}}}}
                  /items/{id}: {get: {operationId: one, parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'200': {description: x}}}}
                  /café: {get: {operationId: cafe, responses: {'200': {description: x}}}}
                  /responses?beta=true: {post: {operationId: beta, responses: {'200': {description: x}}}}
                  /files/{id}#get_shared_link: {get: {operationId: link, parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'200': {description: x}}}}
                  /files/{id}: {get: {operationId: file, parameters: [{name: id, in: path, required: true, schema: {type: string}}], responses: {'200': {description: x}}}}
                """)
        func id(_ path: String, _ method: String = "GET") -> String? {
            guard case .operation(let operation, _) = contract.match(method: method, path: path) else { return nil }
            return operation.id
        }
        XCTAssertEqual(id("/items/m%69ne"), "mine")
        XCTAssertEqual(id("/items/m%6A"), "one")
        XCTAssertEqual(id("/caf%C3%A9"), "cafe")
        XCTAssertEqual(id("/responses?beta=true", "POST"), "beta")
        // Box writes variants of one path with a fragment: the plain path comes first.
        XCTAssertEqual(id("/files/7"), "file")
        XCTAssertEqual(
            contract.warnings.filter { $0.message.contains("is matched by its path") }.count, 1, "\(contract.warnings)")
    }

    func testResponseHeadChecks() throws {
        let shop = try Self.shop()
        var check = shop.checkResponse(
            method: "GET", path: "/v2/items", status: 200,
            headers: [("Content-Type", "application/json; charset=utf-8")])
        XCTAssertEqual(check.operation, "listItems (GET /items)")
        XCTAssertEqual(check.violations.map(\.keyword), ["required"])
        XCTAssertEqual(check.violations.first?.pointer, "header:X-Rate-Limit")
        XCTAssertNotNil(check.bodySchema)
        check = shop.checkResponse(
            method: "GET", path: "/v2/items", status: 200,
            headers: [("content-type", "application/json"), ("x-rate-limit", "many")])
        XCTAssertEqual(check.violations.map(\.keyword), ["type"])
        check = shop.checkResponse(
            method: "GET", path: "/v2/items", status: 429, headers: [("content-type", "application/problem+json")])
        XCTAssertEqual(check.violations.count + check.undocumented.count, 0, "4XX matches 429")
        check = shop.checkResponse(method: "GET", path: "/v2/items/3", status: 500, headers: [])
        XCTAssertEqual(check.undocumented.map(\.keyword), ["undocumented-status"])
        check = shop.checkResponse(
            method: "GET", path: "/v2/items/3", status: 200, headers: [("content-type", "text/html")])
        XCTAssertEqual(check.undocumented.map(\.keyword), ["undocumented-content-type"])
        // An empty body is said as one, not as a missing type.
        check = shop.checkResponse(method: "GET", path: "/v2/items/3", status: 200, headers: [("Content-Length", "0")])
        XCTAssertEqual(
            check.undocumented.map(\.found), ["an empty body (Content-Length: 0, no Content-Type)"])
        check = shop.checkResponse(
            method: "GET", path: "/v2/pets/1", status: 200, headers: [("content-type", "text/plain")])
        XCTAssertNil(check.bodySchema, "only JSON bodies are validated")
        XCTAssertTrue(check.undocumented.isEmpty)
        check = shop.checkResponse(
            method: "GET", path: "/v2/report.csv", status: 200, headers: [("content-type", "text/csv")])
        XCTAssertTrue(check.undocumented.isEmpty && check.violations.isEmpty)
    }

    func testBodiesAgainstTheOperationsSchemas() throws {
        let shop = try Self.shop()
        let schema = try XCTUnwrap(
            shop.checkResponse(
                method: "GET", path: "/v2/items", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        XCTAssertTrue(schema.validate(Array("{\"items\": [\(Self.item)], \"total\": 1, \"next\": null}".utf8)).passed)
        // A null where a number is promised, deep in an array.
        let broken = Self.item.replacingOccurrences(of: "12.5", with: "null")
        let verdict = schema.validate(Array("{\"items\": [\(Self.item), \(broken)], \"total\": 2}".utf8))
        XCTAssertEqual(verdict.total, 1)
        let violation = try XCTUnwrap(verdict.violations.first)
        XCTAssertEqual(violation.pointer, "/items/1/price")
        XCTAssertEqual(violation.keyword, "type")
        XCTAssertEqual(violation.expected, "number")
        XCTAssertEqual(violation.found, "null")
        XCTAssertTrue(violation.schema.hasSuffix("item.yaml#/Item/properties/price"), violation.schema)
        // nullable admits null; exclusiveMinimum as a boolean (3.0); enums; formats stay annotations.
        XCTAssertTrue(
            schema.validate(
                Array(
                    "{\"items\": [\(Self.item.replacingOccurrences(of: "\"tags\"", with: "\"discount\": null, \"tags\""))], \"total\": 1}"
                        .utf8)
            ).passed)
        XCTAssertEqual(
            schema.validate(
                Array("{\"items\": [\(Self.item.replacingOccurrences(of: "12.5", with: "0"))], \"total\": 1}".utf8)
            ).violations.first?.keyword, "exclusiveMinimum")
        XCTAssertEqual(
            schema.validate(
                Array(
                    "{\"items\": [\(Self.item.replacingOccurrences(of: "available", with: "gone"))], \"total\": 1}".utf8
                )
            ).violations.first?.keyword, "enum")
        // writeOnly properties are not required in responses, and (3.0: "SHOULD NOT be sent as part
        // of the response") break the contract there; readOnly ones likewise in requests.
        let withSecret = Self.item.replacingOccurrences(of: "\"id\": 7, ", with: "\"id\": 7, \"secret\": \"s\", ")
        let leaked = schema.validate(Array("{\"items\": [\(withSecret)], \"total\": 1}".utf8))
        XCTAssertEqual(
            leaked.violations.map { "\($0.place) \($0.keyword): \($0.expected), found \($0.found)" },
            [#"/items/0 writeOnly: no property "secret" in a response (writeOnly), found present"#])
        let request = try XCTUnwrap(
            shop.checkRequest(
                method: "POST", path: "/v2/items", query: nil,
                headers: [
                    ("Content-Type", "application/json"), ("X-Request-Id", "3f1c2a9e-8f7b-4c0e-9d3a-1b2c3d4e5f60"),
                ], hasBody: true
            ).bodySchema)
        let created = Self.item.replacingOccurrences(of: "\"id\": 7, ", with: "\"secret\": \"s\", ")
        XCTAssertTrue(request.validate(Array(created.utf8), direction: .request).passed)
        let withoutSecret = Self.item.replacingOccurrences(of: "\"id\": 7, ", with: "")
        XCTAssertEqual(
            request.validate(Array(withoutSecret.utf8), direction: .request).violations.map(\.keyword), ["required"])
        XCTAssertEqual(
            request.validate(Array(withSecret.utf8), direction: .request).violations.map(\.expected),
            [#"no property "id" in a request (readOnly)"#])
    }

    /// A Reference Object stands for its target: `readOnly`/`writeOnly` said by a `$ref`'s
    /// target (or an `allOf` member) lift `required` as if written in place (Okta's SplunkToken).
    func testReadOnlyAndWriteOnlyThroughReferencesLiftRequired() throws {
        for version in ["3.0.3", "3.1.0"] {
            let contract = try Self.document(
                version,
                schema: "{type: object, required: [host, token, id, key], properties: {host: {type: string}, "
                    + "token: {$ref: '#/components/schemas/Token'}, id: {$ref: '#/components/schemas/Id'}, "
                    + "key: {allOf: [{$ref: '#/components/schemas/Key'}]}}}",
                components: """
                    components:
                      schemas:
                        Token: {type: string, writeOnly: true}
                        Id: {$ref: '#/components/schemas/Ident'}
                        Ident: {type: string, readOnly: true}
                        Key: {type: string, writeOnly: true}
                    """)
            let schema = try Self.bodySchema(contract)
            let response = Array(#"{"host": "a.example", "id": "s1"}"#.utf8)
            XCTAssertTrue(schema.validate(response).passed, "\(version): token and key are write-only")
            XCTAssertFalse(schema.validate(response, direction: .request).passed, "\(version): a request needs them")
            let request = Array(#"{"host": "a.example", "token": "t", "key": "k"}"#.utf8)
            XCTAssertTrue(schema.validate(request, direction: .request).passed, "\(version): id is read-only")
            XCTAssertFalse(schema.validate(request).passed, "\(version): a response needs it")
        }
        // A schema that applies itself many times over is followed once per place, not per path.
        let started = ContinuousClock.now
        let selfish = try Self.document(
            "3.1.0", schema: "{type: object, required: [n], properties: {n: {$ref: '#/components/schemas/Node'}}}",
            components: "components:\n  schemas:\n    Node: {allOf: ["
                + Array(repeating: "{$ref: '#/components/schemas/Node'}", count: 10).joined(separator: ", ") + "]}")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
        XCTAssertNotNil(try? Self.bodySchema(selfish))
    }

    /// ECMA-262 sets no bound on `{n,m}`; PCRE2 stops at 65,535. Such a pattern is said and not
    /// checked: the rest of the document (Adyen's Terminal API) is used.
    func testPatternWithARepetitionBoundPCRE2CannotHoldIsAWarning() throws {
        let contract = try Self.document(
            "3.1.0",
            schema: "{type: object, properties: {xhtml: {type: string, pattern: '^.{0,262144}$'}, n: {type: integer}}}")
        XCTAssertEqual(contract.warnings.count, 1)
        XCTAssertTrue(contract.warnings.first?.message.contains("over 65,535") == true, "\(contract.warnings)")
        let schema = try Self.bodySchema(contract)
        XCTAssertTrue(schema.validate(Array(#"{"xhtml": "<p/>", "n": 1}"#.utf8)).passed)
        XCTAssertFalse(schema.validate(Array(#"{"xhtml": "<p/>", "n": "1"}"#.utf8)).passed, "the rest is checked")
    }

    /// A 3.0 document written with 3.1's keywords, or a nullable that cannot apply, is told
    /// so at load; the verdicts follow 3.0 (the keywords are not applied).
    func testWhatOpenAPI30IgnoresIsSaid() throws {
        let contract = try Self.document(
            "3.0.3",
            schema: "{type: object, properties: {percent: {type: number, exclusiveMaximum: 100}, kind: {const: fixed}, "
                + "item: {$ref: '#/components/schemas/Item', nullable: true}, plain: {type: string, nullable: true}, "
                + "other: {allOf: [{$ref: '#/components/schemas/Item'}], nullable: true}}}",
            components: "components:\n  schemas:\n    Item: {type: object}")
        let messages = contract.warnings.map(\.message)
        // Each nullable that cannot apply is said at its place; the other keywords once.
        XCTAssertEqual(messages.count, 4, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("nullable without type") }.count, 2, "\(messages)")
        XCTAssertTrue(messages.contains { $0.hasPrefix("exclusiveMaximum with a number is OpenAPI 3.1's form") })
        XCTAssertTrue(messages.contains { $0.hasPrefix("const is not a keyword of OpenAPI 3.0's Schema Object") })
        XCTAssertTrue(messages.contains { $0.hasPrefix("nullable without type in the same schema has no effect") })
        let schema = try Self.bodySchema(contract)
        XCTAssertTrue(schema.validate(Array(#"{"percent": 250, "kind": "other", "plain": null}"#.utf8)).passed)
        XCTAssertFalse(schema.validate(Array(#"{"item": null}"#.utf8)).passed)
        XCTAssertTrue(
            try Self.document("3.1.0", schema: "{type: number, exclusiveMaximum: 100, const: 5}").warnings.isEmpty)
    }

    /// 3.0's Reference Object hides what is written beside it: constraints there are said (at
    /// each place), annotations (`description`, `readOnly`) are not; 3.1 reads them.
    func testConstraintsBesideARefIn30AreSaid() throws {
        let schema =
            "{type: object, properties: {tag: {$ref: '#/components/schemas/Tag', required: [name], maxProperties: 1}, "
            + "quiet: {$ref: '#/components/schemas/Tag', description: the tag, readOnly: true}}}"
        let components = "components:\n  schemas:\n    Tag: {type: object, properties: {name: {type: string}}}"
        let old = try Self.document("3.0.3", schema: schema, components: components)
        XCTAssertEqual(
            old.warnings.map(\.message),
            [
                "required, maxProperties beside $ref are ignored in OpenAPI 3.0 (and 2.0) (3.1 and 2019-09 read them): nothing checks them; write allOf: [{$ref: …}, {…}]"
            ])
        XCTAssertTrue(try Self.bodySchema(old).validate(Array(#"{"tag": {"a": 1, "b": 2}}"#.utf8)).passed)
        let new = try Self.document("3.1.0", schema: schema, components: components)
        XCTAssertTrue(new.warnings.isEmpty, "\(new.warnings)")
        XCTAssertFalse(try Self.bodySchema(new).validate(Array(#"{"tag": {"a": 1, "b": 2}}"#.utf8)).passed)
    }

    func testDiscriminatorWordsTheViolationAndNeverChangesTheVerdict() throws {
        let shop = try Self.shop()
        let schema = try XCTUnwrap(
            shop.checkResponse(
                method: "GET", path: "/v2/pets/1", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        XCTAssertTrue(schema.validate(Array(#"{"petType": "cat", "name": "Tom", "lives": 7}"#.utf8)).passed)
        var verdict = schema.validate(Array(#"{"name": "Rex", "petType": "dog", "bark": "woof"}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["enum"], "\(verdict.violations)")
        XCTAssertEqual(verdict.violations.first?.pointer, "/bark")
        verdict = schema.validate(Array(#"{"petType": "dog", "name": "Rex"}"#.utf8))
        XCTAssertEqual(verdict.violations.first?.keyword, "required")
        XCTAssertEqual(verdict.violations.first?.expected, "property \"bark\"")
        verdict = schema.validate(Array(#"{"petType": "bird", "name": "Tweety"}"#.utf8))
        XCTAssertEqual(verdict.violations.first?.keyword, "discriminator")
        XCTAssertEqual(verdict.violations.first?.found, "\"bird\"")
        // "discriminator MUST NOT change the validation outcome" (OAS 3.1.1, 3.0.4): a value no
        // mapping names passes when exactly one branch matches ...
        verdict = schema.validate(Array(#"{"petType": "kitten", "name": "Tom", "lives": 3}"#.utf8))
        XCTAssertTrue(verdict.passed, "\(verdict.violations)")
        // ... and a value that names a branch does not lift oneOf's "exactly one".
        verdict = schema.validate(Array(#"{"petType": "cat", "name": "Tom", "lives": 3, "bark": "soft"}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["oneOf"], "\(verdict.violations)")
        XCTAssertEqual(
            verdict.violations.first?.found,
            #"2 matched: schemas/pets.yaml#/Cat, schemas/pets.yaml#/Dog (petType "cat" names schemas/pets.yaml#/Cat; a discriminator does not choose)"#
        )
    }

    /// Implicit discriminator names are component names (OAS 3.1.1 §4.8.25): a branch in a file
    /// of its own has none, so a wrong value's message lists only the mapping's names.
    func testABranchInAFileOfItsOwnHasNoImplicitName() throws {
        let contract = try Self.load(files: [
            "api.yaml": Array(
                """
                openapi: 3.1.0
                info: {title: menu, version: "1"}
                paths:
                  /menu:
                    get:
                      responses:
                        "200":
                          description: ok
                          content:
                            application/json:
                              schema:
                                oneOf: [{$ref: ./Beverage.yaml}, {$ref: '#/components/schemas/Dessert'}]
                                discriminator: {propertyName: category, mapping: {beverage: ./Beverage.yaml}}
                components:
                  schemas:
                    Dessert: {type: object, required: [category], properties: {category: {const: sweet}}}
                """.utf8),
            "Beverage.yaml": Array(
                "{type: object, required: [category], properties: {category: {const: beverage}}}".utf8),
        ])
        let schema = try XCTUnwrap(
            contract.checkResponse(
                method: "GET", path: "/menu", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        XCTAssertTrue(schema.validate(Array(#"{"category": "beverage"}"#.utf8)).passed)
        let verdict = schema.validate(Array(#"{"category": "tea"}"#.utf8))
        XCTAssertEqual(verdict.violations.first?.keyword, "discriminator", "\(verdict.violations)")
        XCTAssertEqual(
            verdict.violations.first?.expected, #"category one of "Dessert", "beverage", "sweet""#,
            "\(verdict.violations)")
    }

    func testADiscriminatorWithoutMappingPicksTheBranchThatFixesTheValue() throws {
        // OpenAI's layout: no mapping, each branch fixing `type` with an enum or const.
        let contract = try Self.document(
            "3.1.0",
            schema:
                "{oneOf: [{$ref: '#/components/schemas/Call'}, {$ref: '#/components/schemas/Message'}], discriminator: {propertyName: type}}",
            components: """
                components:
                  schemas:
                    Call: {type: object, required: [type, name], properties: {type: {enum: [function_call]}, name: {type: string}}}
                    Message: {type: object, required: [type, content], properties: {type: {const: message}, content: {type: array, items: {type: object, required: [text, logprobs]}}}}
                """)
        let schema = try Self.bodySchema(contract)
        XCTAssertTrue(
            schema.validate(Array(#"{"type": "message", "content": [{"text": "a", "logprobs": []}]}"#.utf8)).passed)
        let verdict = schema.validate(Array(#"{"type": "message", "content": [{"text": "a"}]}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["required"], "\(verdict.violations)")
        XCTAssertEqual(verdict.violations.first?.pointer, "/content/0")
        XCTAssertEqual(verdict.violations.first?.expected, "property \"logprobs\"")
    }

    func testObjectAndContentParametersAndStructuredHeaders() throws {
        // OAS 3.0.3 §4.7.12 Style Values: objects in form (exploded or not) and simple style;
        // a `content` parameter is JSON text; response headers follow the same rules (§4.7.21).
        let contract = try Self.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1'}
                paths:
                  /search:
                    get:
                      parameters:
                        - {name: point, in: query, required: true, schema: {type: object, required: [lat], properties: {lat: {type: number}, lng: {type: number}}}}
                        - {name: color, in: query, explode: false, schema: {type: object, properties: {R: {type: integer}, G: {type: integer}}}}
                        - {name: filter, in: query, content: {application/json: {schema: {type: object, required: [x]}}}}
                        - {name: deep, in: query, required: true, style: deepObject, schema: {type: object}}
                        - {name: X-Box, in: header, explode: true, schema: {type: object, properties: {w: {type: integer}}}}
                        - {name: tags, in: query, explode: false, schema: {type: array, maxItems: 2, items: {type: string}}}
                      responses:
                        '200':
                          description: ok
                          headers:
                            X-Item-Ids: {schema: {type: array, items: {type: integer}}}
                            X-Page: {schema: {type: object, properties: {next: {type: integer}, size: {type: integer}}}}
                """)
        func violations(_ query: String, headers: [(String, String)] = []) -> [String] {
            contract.checkRequest(method: "GET", path: "/search", query: query, headers: headers, hasBody: false)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        XCTAssertEqual(violations("lat=1&lng=2&deep[a]=1"), [])
        XCTAssertEqual(violations("lat=1&color=R,100,G,200&deep[a]=1", headers: [("X-Box", "w=3")]), [])
        XCTAssertEqual(violations("lng=2&deep[a]=1"), ["query:point required"])
        XCTAssertEqual(violations("lat=x&deep[a]=1"), ["query:point/lat type"])
        XCTAssertEqual(violations("lat=1&color=R,x&deep[a]=1"), ["query:color/R type"])
        XCTAssertEqual(violations("lat=1&filter=%7B%7D&deep[a]=1"), ["query:filter required"])
        XCTAssertEqual(
            violations("lat=1&filter=%7B%22x%22:1%7D&deep[a]=1", headers: [("X-Box", "w=x")]), ["header:X-Box/w type"])
        XCTAssertEqual(violations("lat=1"), ["query:deep required"])
        // A percent-encoded comma is data, not a delimiter (RFC 6570); a header list's OWS is not data.
        XCTAssertEqual(violations("lat=1&deep[a]=1&tags=a%2Cb,c&color=R,1%2C"), ["query:color/R type"])
        XCTAssertEqual(violations("lat=1&deep[a]=1&tags=a,b,c"), ["query:tags maxItems"])
        func headers(_ fields: [(String, String)]) -> [String] {
            contract.checkResponse(method: "GET", path: "/search", status: 200, headers: fields)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        XCTAssertEqual(headers([("X-Item-Ids", "1,2,3"), ("X-Page", "next,2,size,50")]), [])
        XCTAssertEqual(headers([("X-Item-Ids", "1"), ("X-Item-Ids", "2")]), [])
        XCTAssertEqual(headers([("X-Item-Ids", "1, 2 ,3"), ("X-Page", "next, 2, size, 50")]), [])
        XCTAssertEqual(
            headers([("X-Item-Ids", "1,b"), ("X-Page", "next,x")]),
            ["header:X-Item-Ids/1 type", "header:X-Page/next type"])
    }

    func testEveryServerAndPathItemAndOperationServersGiveBasePaths() throws {
        // OAS 3.0.3 §4.7.9, §4.7.10: servers of a path item or an operation replace the root's.
        let contract = try Self.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1'}
                servers: [{url: 'https://api.example.com/v2'}, {url: 'http://localhost:8080/v2-beta'}]
                paths:
                  /operation:
                    post:
                      servers: [{url: 'https://httpbin.com/anything/{area}', variables: {area: {default: demo}}}]
                      responses: {'200': {description: ok}}
                    get:
                      responses: {'200': {description: ok}}
                  /common/path:
                    servers: [{url: 'https://files.example.com/'}]
                    put:
                      responses: {'200': {description: ok}}
                  /open:
                    delete: {}
                """)
        func matched(_ method: String, _ path: String) -> String {
            switch contract.match(method: method, path: path) {
            case .operation(let operation, _): return operation.template
            case .methodNotDocumented: return "method"
            case .pathNotDocumented: return "path"
            case .outsideBasePath: return "outside"
            }
        }
        XCTAssertEqual(matched("POST", "/anything/demo/operation"), "/operation")
        XCTAssertEqual(matched("POST", "/v2/operation"), "method", "the operation's servers replace the root's")
        XCTAssertEqual(matched("GET", "/v2/operation"), "/operation")
        XCTAssertEqual(matched("GET", "/v2-beta/operation"), "/operation", "every root server counts")
        XCTAssertEqual(matched("PUT", "/common/path"), "/common/path")
        XCTAssertEqual(matched("PUT", "/v2/common/path"), "path")
        // (Under the root path `files.example.com` gives: documented nowhere.)
        XCTAssertEqual(matched("GET", "/elsewhere/x"), "path")
        // An operation without responses (3.1 allows it) makes no status undocumented.
        XCTAssertEqual(
            contract.checkResponse(method: "DELETE", path: "/v2/open", status: 418, headers: []).undocumented.count, 0)
        XCTAssertEqual(
            contract.checkResponse(method: "GET", path: "/v2/operation", status: 418, headers: []).undocumented.map(
                \.keyword), ["undocumented-status"])
        // A 304 not listed is the client's cache's doing, not a broken promise.
        XCTAssertEqual(
            contract.checkResponse(method: "GET", path: "/v2/operation", status: 304, headers: []).undocumented.count, 0
        )
    }

    func testSpaceAndPipeDelimitedArraysSplitAtTheirEncodedDelimiters() throws {
        // OAS 3.0.3 §4.7.12.4: spaceDelimited `blue%20black`, pipeDelimited `blue|black`.
        let contract = try Self.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1'}
                paths:
                  /q:
                    get:
                      parameters:
                        - {name: sp, in: query, style: spaceDelimited, explode: false, schema: {type: array, items: {type: integer}}}
                        - {name: pp, in: query, style: pipeDelimited, explode: false, schema: {type: array, maxItems: 2, items: {type: integer}}}
                      responses: {'204': {description: ok}}
                """)
        func violations(_ query: String) -> [String] {
            contract.checkRequest(method: "GET", path: "/q", query: query, headers: [], hasBody: false)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        XCTAssertEqual(violations("sp=1%202&pp=1|2"), [])
        XCTAssertEqual(violations("sp=1+2+3&pp=1%7C2"), [])
        XCTAssertEqual(violations("sp=1%20x"), ["query:sp/1 type"])
        XCTAssertEqual(violations("pp=1|2|3"), ["query:pp maxItems"])
    }

    func testParameterTypesUnderCompositionsAndEnums() throws {
        // FastAPI's Optional[int], a 3.0 `allOf: [$ref]` object, an enum without type.
        let contract = try Self.load(
            yaml: """
                openapi: 3.1.0
                info: {title: t, version: '1'}
                paths:
                  /items:
                    get:
                      parameters:
                        - {name: limit, in: query, schema: {anyOf: [{type: integer}, {type: 'null'}]}}
                        - {name: color, in: query, explode: false, schema: {allOf: [{$ref: '#/components/schemas/Color'}]}}
                        - {name: X-Count, in: header, schema: {enum: [1, 2, 3]}}
                      responses: {'200': {description: x}}
                components:
                  schemas:
                    Color: {type: object, properties: {R: {type: integer}}}
                """)
        func violations(_ query: String, headers: [(String, String)] = []) -> [String] {
            contract.checkRequest(method: "GET", path: "/items", query: query, headers: headers, hasBody: false)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        XCTAssertEqual(violations("limit=10&color=R,100", headers: [("X-Count", "2")]), [])
        XCTAssertEqual(violations("limit=x"), ["query:limit anyOf"])
        XCTAssertEqual(violations("color=R,x"), ["query:color/R type"])
        XCTAssertEqual(violations("", headers: [("X-Count", "5")]), ["header:X-Count enum"])
    }

    /// OpenAPI 3's Parameter Object: header parameters named Accept, Content-Type or
    /// Authorization SHALL be ignored (PagerDuty's description requires both on every operation).
    func testHeaderParametersTheSpecIgnores() throws {
        let contract = try Self.load(
            yaml: """
                openapi: 3.0.2
                info: {title: t, version: '1'}
                paths:
                  /incidents/{id}:
                    get:
                      parameters:
                        - {name: id, in: path, required: true, schema: {type: string}}
                        - {name: Accept, in: header, required: true, schema: {type: string, enum: [application/vnd.x+json]}}
                        - {name: Content-Type, in: header, required: true, schema: {type: string, enum: [application/json]}}
                        - {name: authorization, in: header, required: true, schema: {type: string, pattern: '^Token '}}
                        - {name: X-Early-Access, in: header, required: true, schema: {type: string}}
                      responses: {'200': {description: x}}
                """)
        func violations(_ headers: [(String, String)]) -> [String] {
            contract.checkRequest(method: "GET", path: "/incidents/P1", query: nil, headers: headers, hasBody: false)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        XCTAssertEqual(violations([("x-early-access", "yes")]), [])
        XCTAssertEqual(
            violations([("accept", "*/*"), ("content-type", "text/plain; charset=utf-8"), ("x-early-access", "1")]), [])
        XCTAssertEqual(violations([]), ["header:X-Early-Access required"])
        // Located at the parameter's `required` (a report's line), not nowhere.
        let missing = contract.checkRequest(
            method: "GET", path: "/incidents/P1", query: nil, headers: [], hasBody: false)
        XCTAssertEqual(missing.violations.map(\.schema), ["#/paths/~1incidents~1{id}/get/parameters/4/required"])
        // Nor does lint warn about them: the specification says what happens.
        XCTAssertFalse(
            contract.warnings.contains { $0.message.contains("Accept") || $0.message.contains("Content-Type") })
    }

    func testRequestParameters() throws {
        let shop = try Self.shop()
        var check = shop.checkRequest(
            method: "GET", path: "/v2/items", query: "limit=abc&status=sold_out&tag=a&tag=b", headers: [],
            hasBody: false)
        XCTAssertEqual(check.violations.map(\.pointer), ["query:limit"])
        check = shop.checkRequest(method: "GET", path: "/v2/items", query: "limit=500", headers: [], hasBody: false)
        XCTAssertEqual(check.violations.map(\.keyword), ["maximum"])
        check = shop.checkRequest(method: "GET", path: "/v2/items/0", query: nil, headers: [], hasBody: false)
        XCTAssertEqual(check.violations.map(\.pointer), ["path:itemId"])
        check = shop.checkRequest(
            method: "POST", path: "/v2/items", query: nil, headers: [("content-type", "application/json")],
            hasBody: false)
        XCTAssertEqual(Set(check.violations.map(\.keyword)), ["required"])
        XCTAssertEqual(check.violations.count, 2, "\(check.violations)")
    }

    /// A HEAD answer is checked as its GET's head: an undocumented media type is said, and no
    /// body schema is given (there is no body).
    func testHeadAnswersHaveTheirMediaTypeChecked() throws {
        let shop = try Self.shop()
        let listed = shop.checkResponse(
            method: "HEAD", path: "/v2/items", status: 200,
            headers: [("content-type", "application/json"), ("x-rate-limit", "10")])
        XCTAssertTrue(
            listed.undocumented.isEmpty && listed.violations.isEmpty, "\(listed.undocumented) \(listed.violations)")
        XCTAssertNil(listed.bodySchema)
        let other = shop.checkResponse(
            method: "HEAD", path: "/v2/items", status: 200, headers: [("content-type", "text/html")])
        XCTAssertEqual(other.undocumented.map(\.keyword), ["undocumented-content-type"])
        let untyped = shop.checkResponse(method: "HEAD", path: "/v2/items", status: 200, headers: [])
        XCTAssertTrue(untyped.undocumented.isEmpty, "a HEAD answer may leave Content-Type out")
    }

    /// A server URL's variables take their defaults (OpenAPI 3.0.3 §4.7.5) in the base path.
    func testServerVariablesTakeTheirDefaults() throws {
        func base(_ servers: String) throws -> String {
            try Self.load(yaml: "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: \(servers)\npaths: {}\n")
                .basePath
        }
        XCTAssertEqual(
            try base("[{url: 'http://h/{ver}/api', variables: {ver: {default: v9, enum: [v8, v9]}}}]"), "/v9/api")
        XCTAssertEqual(try base("[{url: 'https://{host}/v2/', variables: {host: {default: api.example.com}}}]"), "/v2")
        XCTAssertEqual(try base("[{url: '/{a}/{b}', variables: {a: {default: x}, b: {default: y}}}]"), "/x/y")
        XCTAssertEqual(try base("[{url: 'https://api.example.com/v1'}]"), "/v1")
        // Without a default, its first enum value; every enum value is a base path too (as
        // Prism and openapi-core match them).
        let listed = try Self.load(
            yaml:
                "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'http://h/{ver}/{area}', variables: {ver: {enum: [v1, v2]}, area: {default: eu, enum: [us, eu]}}}]\npaths: {}\n"
        )
        XCTAssertEqual(listed.basePath, "/v1/eu")
        XCTAssertEqual(listed.basePaths, ["/v1/eu", "/v1/us", "/v2/eu", "/v2/us"])
        // A host's variables take their defaults: they make no base paths.
        let hosts = try Self.load(
            yaml:
                "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://{region}.api.test/{ver}', variables: {region: {default: eu, enum: [eu, us, ap]}, ver: {default: v1, enum: [v1, v2]}}}]\npaths: {}\n"
        )
        XCTAssertEqual(hosts.basePaths, ["/v1", "/v2"])
        XCTAssertTrue(listed.warnings.isEmpty)
        // Without a default or values: kept as written, and said.
        let literal = try Self.load(
            yaml:
                "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'http://h/{ver}', variables: {ver: {description: any}}}]\npaths: {}\n"
        )
        XCTAssertEqual(literal.basePath, "/{ver}")
        XCTAssertEqual(literal.warnings.map(\.pointer), ["/servers/0/url"])
    }

    /// Specification Extensions hold any JSON: nothing inside them is read or warned about, but a
    /// header named `x-…` is a header.
    func testExtensionsAreNotRead() throws {
        let contract = try Self.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1', x-logo: {description: 5}}
                x-root: {description: [1], summary: 3}
                paths:
                  /a:
                    get:
                      x-samples: [{summary: 1}]
                      responses:
                        '200':
                          description: ok
                          headers:
                            x-request-id: {description: 5, schema: {type: string}}
                          content:
                            application/json: {schema: {type: object}}
                """)
        XCTAssertEqual(
            contract.warnings.map(\.pointer), ["/paths/~1a/get/responses/200/headers/x-request-id/description"])
    }

    /// A blank `paths:` (null) beside components is no paths, as before.
    func testBlankPathsWithComponents() throws {
        let contract = try Self.load(
            yaml: "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\ncomponents: {schemas: {A: {type: string}}}\n"
        )
        XCTAssertEqual(contract.operations.count, 0)
    }

    /// An anchor of a file whose root has an `$id` is reached through the file's own path too.
    func testAnAnchorThroughTheFileOfAnIdentifiedSchema() throws {
        let contract = try Self.load(files: [
            "api.yaml": Array(
                """
                openapi: 3.1.0
                info: {title: t, version: '1'}
                paths:
                  /a:
                    get:
                      responses:
                        '200': {description: ok, content: {application/json: {schema: {$ref: 'schemas/pet.yaml#petName'}}}}
                """.utf8),
            "schemas/pet.yaml": Array(
                """
                $id: https://schemas.example.com/pet
                type: object
                $defs:
                  name: {$anchor: petName, type: string, maxLength: 3}
                """.utf8),
        ])
        let schema = try Self.bodySchema(contract)
        XCTAssertEqual(schema.validate(Array(#""toolong""#.utf8)).violations.map(\.keyword), ["maxLength"])
        XCTAssertEqual(schema.validate(Array(#""ok""#.utf8)).violations.count, 0)
    }

    /// `paths: {$ref: …}` (not allowed by OpenAPI, written by split descriptions) is followed,
    /// with a warning; the path items' own `$ref`s resolve from the file that holds them.
    func testPathsByReference() throws {
        let contract = try Self.load(files: [
            "api.yaml": Array(
                "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {$ref: './paths/index.yml'}\n".utf8),
            "paths/index.yml": Array("/geo:\n  $ref: ./geo.yml\nx-note: {description: 1}\n".utf8),
            "paths/geo.yml": Array(
                """
                post:
                  operationId: geolocate
                  responses:
                    '200':
                      description: ok
                      content: {application/json: {schema: {type: object, required: [location]}}}
                """.utf8),
        ])
        XCTAssertEqual(
            contract.warnings.map(\.message), ["paths is a $ref, which OpenAPI does not allow here; followed"])
        let check = contract.checkResponse(
            method: "POST", path: "/geo", status: 200, headers: [("content-type", "application/json")])
        let schema = try XCTUnwrap(check.bodySchema)
        XCTAssertFalse(schema.validate(Array("{}".utf8)).passed)
    }

    /// A range that covers JSON (`application/*`) has its schema applied to JSON bodies, and lint
    /// and the CLI's schema lookup say so as the proxy does.
    func testRangesThatCoverJSON() throws {
        let contract = try Self.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1'}
                paths:
                  /b:
                    get:
                      operationId: getB
                      responses:
                        '200':
                          description: ok
                          content: {'application/*': {schema: {type: object, required: [x]}}, image/png: {schema: {type: string}}}
                """)
        XCTAssertEqual(contract.summary.withResponseSchemas, 1)
        XCTAssertEqual(
            contract.findings.map(\.message),
            ["getB (GET /b) 200 image/png: only JSON bodies are validated; its schema is not applied"])
        let operation = try XCTUnwrap(contract.operation(method: "GET", template: "/b"))
        let schema = try XCTUnwrap(contract.responseSchema(of: operation, status: 200))
        XCTAssertFalse(schema.validate(Array("{}".utf8)).passed)
        let check = contract.checkResponse(
            method: "GET", path: "/b", status: 200, headers: [("content-type", "application/problem+json")])
        XCTAssertNotNil(check.bodySchema)
        // A suffix range takes the types with that suffix, before a wider range.
        let suffixed = try Self.load(
            yaml: """
                openapi: 3.0.3
                info: {title: t, version: '1'}
                paths:
                  /c:
                    get:
                      responses:
                        '200':
                          description: ok
                          content: {'application/*+json': {schema: {type: object, required: [y]}}, '*/*': {schema: {type: string}}}
                """)
        let vendor = suffixed.checkResponse(
            method: "GET", path: "/c", status: 200, headers: [("content-type", "application/vnd.acme+json")])
        XCTAssertTrue(vendor.undocumented.isEmpty, "\(vendor.undocumented)")
        let vendorSchema = try XCTUnwrap(vendor.bodySchema)
        XCTAssertFalse(vendorSchema.validate(Array("{}".utf8)).passed, "the suffix range's schema, not */*'s")
    }

    func testOpenAPI31Document() throws {
        let library = try OpenAPIContract.load(file: Self.fixtures.appendingPathComponent("library.json").path)
        XCTAssertEqual(library.basePath, "")
        let book = try XCTUnwrap(
            library.checkResponse(
                method: "GET", path: "/books/9780000000001", status: 200,
                headers: [("content-type", "application/json")]
            ).bodySchema)
        let valid =
            #"{"isbn": "9780000000001", "title": "T", "subtitle": null, "authors": [{"name": "A"}], "edition": 2, "dimensions": [1.5, 2], "kind": "book"}"#
        XCTAssertTrue(book.validate(Array(valid.utf8)).passed, "\(book.validate(Array(valid.utf8)).violations)")
        let extra = valid.replacingOccurrences(of: "\"kind\"", with: "\"shelf\": 3, \"kind\"")
        XCTAssertEqual(book.validate(Array(extra.utf8)).violations.first?.keyword, "unevaluatedProperties")
        let tooLong = valid.replacingOccurrences(of: "[1.5, 2]", with: "[1.5, 2, 3]")
        XCTAssertFalse(book.validate(Array(tooLong.utf8)).passed)
        let shelves = try XCTUnwrap(
            library.checkResponse(
                method: "GET", path: "/shelves", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        XCTAssertTrue(
            shelves.validate(
                Array(
                    "[{\"books\": [\(valid.replacingOccurrences(of: "\"edition\": 2", with: "\"edition\": 1"))]}]".utf8)
            ).passed)
        XCTAssertFalse(shelves.validate(Array("[{\"books\": [\(valid)]}]".utf8)).passed, "minContains")
        XCTAssertFalse(shelves.validate(Array(#"[{"label": "ab"}]"#.utf8)).passed, "if/then")
        XCTAssertEqual(
            library.checkResponse(method: "GET", path: "/books/1", status: 404, headers: []).undocumented.count, 0)
    }

    func testAnHTTPRefMappedToALocalFileLoadsWithoutTheNetwork() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-refs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let money = directory.appendingPathComponent("money.json").path
        _ = FileManager.default.createFile(
            atPath: money,
            contents: Data(
                #"{"Money": {"type": "object", "required": ["amount", "currency"], "properties": {"amount": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"}, "currency": {"enum": ["EUR", "USD"]}}}}"#
                    .utf8))
        let api = directory.appendingPathComponent("api.yaml").path
        _ = FileManager.default.createFile(
            atPath: api,
            contents: Data(
                "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /price:\n    get:\n      responses:\n        '200':\n          description: x\n          content:\n            application/json:\n              schema: {$ref: 'https://schemas.example/money.json#/Money'}\n"
                    .utf8))
        let document = try OpenAPIContract.load(file: api, refs: ["https://schemas.example/money.json": money])
        let schema = try XCTUnwrap(
            document.checkResponse(
                method: "GET", path: "/price", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        XCTAssertTrue(schema.validate(Array(#"{"amount": "12.50", "currency": "EUR"}"#.utf8)).passed)
        let verdict = schema.validate(Array(#"{"amount": "12.5", "currency": "GBP"}"#.utf8))
        XCTAssertEqual(verdict.violations.map(\.keyword), ["pattern", "enum"])
    }

    func testOpenAPIRegistryFormatsAreAssertedWhenFormatsAre() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("schema.json").path
        _ = FileManager.default.createFile(
            atPath: path,
            contents: Data(
                #"{"type": "object", "properties": {"a": {"type": "integer", "format": "int32"}, "b": {"format": "int64"}, "c": {"type": "string", "format": "byte"}, "d": {"format": "int32"}}}"#
                    .utf8))
        let asserted = try SchemaValidator.load(file: path, formats: .assert)
        let annotated = try SchemaValidator.load(file: path)
        let cases: [(String, Bool)] = [
            (#"{"a": 2147483647, "b": -9223372036854775808}"#, true),
            (#"{"a": -2147483648, "b": 9223372036854775807}"#, true),
            (#"{"a": 1.0, "b": 12e3}"#, true),
            (#"{"a": 2147483648}"#, false),
            (#"{"a": -2147483649}"#, false),
            (#"{"b": 9223372036854775808}"#, false),
            (#"{"b": 1.5}"#, false),
            (#"{"c": "aGVsbG8="}"#, true),
            (#"{"c": "aGk+Lw=="}"#, true),
            (#"{"c": "not base64!!"}"#, false),
            (#"{"c": "aGVsbG8"}"#, false),
            (#"{"c": "aG=sbG8="}"#, false),
            // A numeric format says nothing of strings, nor a string format of numbers.
            (#"{"d": "text"}"#, true),
        ]
        for (body, valid) in cases {
            let verdict = asserted.validate(Array(body.utf8))
            XCTAssertEqual(verdict.passed, valid, body)
            if !valid { XCTAssertEqual(verdict.violations.first?.keyword, "format", body) }
            XCTAssertTrue(annotated.validate(Array(body.utf8)).passed, body)
        }
    }

    func testNullableOutsideOpenAPI30IsSaidAtEachPlaceAndNullStaysRefused() throws {
        func load(_ version: String) throws -> OpenAPIContract {
            try Self.document(
                version,
                schema:
                    "{type: object, properties: {a: {type: string, nullable: true}, b: {type: integer, nullable: true}, c: {type: string, nullable: true, enum: [x, y]}, d: {type: string, nullable: true, enum: [x, null]}}}"
            )
        }
        let schema = Self.bodySchema
        let modern = try load("3.1.0")
        // Each place is one where null fails: said at each (up to 20).
        XCTAssertEqual(modern.warnings.filter { $0.message.contains("nullable is OpenAPI 3.0's") }.count, 4)
        XCTAssertFalse(try schema(modern).validate(Array(#"{"a": null}"#.utf8)).passed)
        let classic = try load("3.0.3")
        XCTAssertFalse(classic.warnings.contains { $0.message.contains("nullable") }, "\(classic.warnings)")
        XCTAssertTrue(try schema(classic).validate(Array(#"{"a": null}"#.utf8)).passed)
        // nullable adds null to type only: an enum must list it (OAS 3.0.3, Schema Object).
        XCTAssertEqual(
            try schema(classic).validate(Array(#"{"c": null}"#.utf8)).violations.map(\.keyword), ["enum"])
        XCTAssertTrue(try schema(classic).validate(Array(#"{"d": null}"#.utf8)).passed)
    }

    func testBrokenDocumentsSayWhereAndWhy() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func load(_ text: String, name: String = "api.yaml") -> ContractError? {
            let path = directory.appendingPathComponent(name).path
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            do {
                _ = try OpenAPIContract.load(file: path)
                return nil
            } catch {
                return error
            }
        }
        var error = load("openapi: 3.0.0\npaths:\n  /a: {get: {responses: {'200': {description: x}}\n")
        XCTAssertNotNil(error?.line, "\(String(describing: error))")
        error = load(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: x\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/Missing'}\n"
        )
        // Said where the $ref is written (line 11), naming where it points.
        XCTAssertEqual(
            error?.pointer, "/paths/~1a/get/responses/200/content/application~1json/schema/$ref",
            "\(String(describing: error))")
        XCTAssertEqual(error?.line, 11)
        XCTAssertTrue(error?.message.contains("#/components/schemas/Missing\" points to nothing") == true)
        error = load(
            "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: x\n          content:\n            application/json:\n              schema: {$ref: 'https://schemas.example/x.json'}\n"
        )
        XCTAssertTrue(error?.message.contains("contract.refs") == true, "\(String(describing: error))")
        error = load("openapi: 3.1.0\njsonSchemaDialect: https://example.com/mine\npaths: {}\n")
        XCTAssertTrue(error?.message.contains("unknown dialect") == true, "\(String(describing: error))")
        // OpenAPI's own dialect by any published iteration, not only …/dialect/base.
        for iteration in ["base", "2024-10-25", "2024-11-10"] {
            error = load(
                "openapi: 3.1.1\ninfo: {title: t, version: '1'}\njsonSchemaDialect: https://spec.openapis.org/oas/3.1/dialect/\(iteration)\npaths: {}\n"
            )
            XCTAssertNil(error, iteration)
        }
        error = load(
            "openapi: 3.1.0\njsonSchemaDialect: https://spec.openapis.org/oas/3.1/dialect/WORK-IN-PROGRESS\npaths: {}\n"
        )
        XCTAssertTrue(error?.message.contains("unknown dialect") == true, "\(String(describing: error))")
        error = load("swagger: '1.2'\n")
        XCTAssertTrue(error?.message.contains("Swagger 2.0") == true)
        // A $ref cycle between files loads.
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent("a.yaml").path,
            contents: Data("A: {type: object, properties: {b: {$ref: 'b.yaml#/B'}}}\n".utf8))
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent("b.yaml").path,
            contents: Data("B: {type: object, properties: {a: {$ref: 'a.yaml#/A'}}}\n".utf8))
        XCTAssertNil(
            load(
                "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: x\n          content:\n            application/json:\n              schema: {$ref: 'a.yaml#/A'}\n"
            ))
    }
}
