import Contract
import Testing

/// Swagger 2.0 (OpenAPI 2.0) documents read into the same checks as 3.x: `basePath`,
/// `definitions`, body parameters, `produces`/`consumes`, parameters and headers that are their
/// own schemas, `collectionFormat`, shared `parameters` and `responses`, `x-nullable`.
@Suite("Swagger 2.0")
struct Swagger2Tests {
    static let petstore = """
        swagger: '2.0'
        info: {title: Petstore, version: '1.0'}
        host: petstore.example
        basePath: /v2
        schemes: [https]
        consumes: [application/json]
        produces: [application/json, application/xml]
        parameters:
          limit:
            name: limit
            in: query
            type: integer
            format: int32
            minimum: 1
            maximum: 100
        responses:
          NotFound:
            description: no such pet
            schema: {$ref: '#/definitions/Error'}
        paths:
          /pets:
            get:
              operationId: listPets
              parameters:
                - $ref: '#/parameters/limit'
                - {name: tags, in: query, type: array, items: {type: string, enum: [cat, dog]}, collectionFormat: csv}
                - {name: ids, in: query, type: array, items: {type: integer}, collectionFormat: multi}
                - {name: X-Trace, in: header, type: string, pattern: '^[a-f0-9]{8}$', required: true}
              responses:
                '200':
                  description: pets
                  headers:
                    X-Total: {type: integer, minimum: 0}
                  schema:
                    type: array
                    items: {$ref: '#/definitions/Pet'}
            post:
              operationId: addPet
              parameters:
                - {name: pet, in: body, required: true, schema: {$ref: '#/definitions/NewPet'}}
              responses:
                '201': {description: created, schema: {$ref: '#/definitions/Pet'}}
          /pets/{petId}:
            parameters:
              - {name: petId, in: path, required: true, type: integer, format: int64}
            get:
              operationId: getPet
              responses:
                '200': {description: a pet, schema: {$ref: '#/definitions/Pet'}}
                '404': {$ref: '#/responses/NotFound'}
          /pets/{petId}/photo:
            get:
              produces: [image/png]
              responses:
                '200': {description: the photo, schema: {type: file}}
            post:
              consumes: [multipart/form-data]
              parameters:
                - {name: petId, in: path, required: true, type: integer}
                - {name: file, in: formData, type: file, required: true}
              responses:
                '204': {description: stored}
        definitions:
          NewPet:
            type: object
            required: [name]
            properties:
              name: {type: string}
              tag: {type: string, x-nullable: true}
              kind: {type: string, discriminator: kind}
          Pet:
            allOf:
              - $ref: '#/definitions/NewPet'
              - type: object
                required: [id]
                properties:
                  id: {type: integer, format: int64, readOnly: true}
          Error:
            type: object
            required: [code]
            properties: {code: {type: integer}, message: {type: string}}
        """

    func contract() throws -> OpenAPIContract { try OpenAPITests.load(yaml: Self.petstore) }

    @Test("A Swagger 2.0 document loads under its basePath")
    func aSwagger2DocumentLoadsUnderItsBasePath() throws {
        let contract = try contract()
        #expect(contract.version == "2.0")
        #expect(contract.basePath == "/v2")
        // (Only that its discriminator, a property name in 2.0, is not used.)
        #expect(
            contract.warnings.map(\.message).allSatisfy { $0.hasPrefix("a Swagger 2.0 discriminator") },
            "\(contract.warnings)")
        #expect(contract.operations.count == 5)
        #expect(contract.summary.withResponseSchemas == 3)
        guard case .outsideBasePath = contract.match(method: "GET", path: "/pets") else {
            Issue.record("/pets is outside /v2")
            return
        }
    }

    @Test("Warnings about a 2.0 schema name Swagger 2.0 and x-nullable, not OpenAPI 3.0")
    func warningsNameSwagger2() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: t, version: '1'}
                paths:
                  /a:
                    get:
                      responses:
                        '200': {description: x, schema: {type: object, properties: {bot: {type: 'null'}, n: {const: 1}}}}
                """)
        let messages = contract.warnings.map(\.message)
        #expect(
            messages.contains {
                $0.hasPrefix("type: \"null\" is not a type of Swagger 2.0 (it writes x-nullable: true)")
            },
            "\(messages)")
        #expect(
            messages.contains { $0.hasPrefix("const is not a keyword of Swagger 2.0's Schema Object") }, "\(messages)")
    }

    @Test("AutoRest's x-ms-parameterized-host: the path of its hostTemplate comes before basePath")
    func parameterizedHostPathComesBeforeBasePath() throws {
        func contract(_ template: String, basePath: String = "") throws -> OpenAPIContract {
            try OpenAPITests.load(
                yaml: """
                    swagger: '2.0'
                    info: {title: t, version: '1'}
                    \(basePath.isEmpty ? "" : "basePath: \(basePath)")
                    x-ms-parameterized-host:
                      hostTemplate: '\(template)'
                      useSchemePrefix: false
                      parameters:
                        - $ref: '#/parameters/Endpoint'
                        - {name: ApiVersion, in: path, required: true, type: string, enum: [v3.1], x-ms-parameter-location: client}
                    parameters:
                      Endpoint: {name: Endpoint, in: path, required: true, type: string, format: url, x-ms-skip-url-encoding: true}
                    produces: [application/json]
                    paths:
                      /:analyze-text:
                        post:
                          operationId: analyze
                          responses: {'200': {description: x, schema: {type: object}}}
                    """)
        }
        let language = try contract("{Endpoint}/language")
        #expect(language.basePath == "/language")
        #expect(language.warnings.isEmpty, "\(language.warnings)")
        #expect(
            language.checkResponse(
                method: "POST", path: "/language/:analyze-text", status: 200,
                headers: [("Content-Type", "application/json")]
            ).operationId == "analyze")
        guard case .outsideBasePath = language.match(method: "POST", path: "/:analyze-text") else {
            Issue.record("/:analyze-text is outside /language")
            return
        }
        // Its variables take their parameters' default or first enum value; basePath follows it.
        let versioned = try contract("{Endpoint}/text/analytics/{ApiVersion}", basePath: "/v1/")
        #expect(versioned.basePath == "/text/analytics/v3.1/v1")
        // One without either stays as written, said once.
        let unknown = try contract("{Endpoint}/{Region}/x")
        #expect(unknown.basePath == "/{Region}/x")
        #expect(unknown.warnings.map(\.pointer) == ["/x-ms-parameterized-host/hostTemplate"])
        // A template that is only a host adds nothing.
        #expect(try contract("{accountName}.{dnsSuffix}", basePath: "/v2").basePath == "/v2")
    }

    @Test("Responses are checked by their schema for what the operation produces")
    func responsesAreCheckedByTheirSchemaForWhatTheOperationProduces() throws {
        let contract = try contract()
        let json = [("Content-Type", "application/json"), ("X-Total", "2")]
        let list = contract.checkResponse(method: "GET", path: "/v2/pets", status: 200, headers: json)
        #expect(list.operationId == "listPets")
        #expect(list.violations.isEmpty && list.undocumented.isEmpty, "\(list.violations) \(list.undocumented)")
        let schema = try #require(list.bodySchema)
        #expect(schema.validate(Array(#"[{"id": 1, "name": "Rex", "tag": null}]"#.utf8)).passed)
        #expect(
            schema.validate(Array(#"[{"name": "Rex", "tag": 3}]"#.utf8)).violations.map {
                "\($0.pointer) \($0.keyword)"
            } == ["/0/tag type", "/0 required"])
        // The header is its own schema; text is read as the type says.
        let negative = contract.checkResponse(
            method: "GET", path: "/v2/pets", status: 200,
            headers: [("Content-Type", "application/json"), ("X-Total", "-1")])
        #expect(negative.violations.map { "\($0.pointer) \($0.keyword)" } == ["header:X-Total minimum"])
        // A type the operation does not produce.
        let html = contract.checkResponse(
            method: "GET", path: "/v2/pets", status: 200, headers: [("Content-Type", "text/html")])
        #expect(html.undocumented.map(\.keyword) == ["undocumented-content-type"])
        // A shared response by $ref.
        let missing = contract.checkResponse(
            method: "GET", path: "/v2/pets/7", status: 404, headers: [("Content-Type", "application/json")])
        #expect(try #require(missing.bodySchema).validate(Array("{}".utf8)).violations.map(\.keyword) == ["required"])
        // A file: its type checked, no body schema.
        let photo = contract.checkResponse(
            method: "GET", path: "/v2/pets/7/photo", status: 200, headers: [("Content-Type", "image/png")])
        #expect(photo.undocumented.isEmpty)
        #expect(photo.bodySchema == nil)
    }

    @Test("Parameters are their own schemas")
    func parametersAreTheirOwnSchemas() throws {
        let contract = try contract()
        func violations(_ path: String, query: String?, headers: [(String, String)] = [("X-Trace", "0a1b2c3d")])
            -> [String]
        {
            contract.checkRequest(method: "GET", path: path, query: query, headers: headers, hasBody: false)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        #expect(violations("/v2/pets", query: "limit=10&tags=cat,dog&ids=1&ids=2") == [])
        #expect(
            violations("/v2/pets", query: "limit=0&tags=cat,cow&ids=1&ids=x") == [
                "query:limit minimum", "query:tags/1 enum", "query:ids/1 type",
            ])
        #expect(violations("/v2/pets", query: nil, headers: []) == ["header:X-Trace required"])
        #expect(violations("/v2/pets/abc", query: nil) == ["path:petId type"])
    }

    @Test("The body parameter is the request body")
    func theBodyParameterIsTheRequestBody() throws {
        let contract = try contract()
        let check = contract.checkRequest(
            method: "POST", path: "/v2/pets", query: nil, headers: [("Content-Type", "application/json")], hasBody: true
        )
        let schema = try #require(check.bodySchema)
        #expect(schema.validate(Array(#"{"name": "Rex"}"#.utf8), direction: .request).passed)
        #expect(
            schema.validate(Array(#"{"tag": "x"}"#.utf8), direction: .request).violations.map(\.keyword) == ["required"]
        )
        let none = contract.checkRequest(method: "POST", path: "/v2/pets", query: nil, headers: [], hasBody: false)
        #expect(none.violations.map(\.keyword) == ["required"])
        // Form parameters: the form's type is documented, the form is not validated.
        let upload = contract.checkRequest(
            method: "POST", path: "/v2/pets/7/photo", query: nil,
            headers: [("Content-Type", "multipart/form-data; boundary=x")], hasBody: true)
        #expect(upload.undocumented.isEmpty && upload.violations.isEmpty, "\(upload.undocumented)")
        #expect(upload.bodySchema == nil)
    }

    /// What the tools that write 2.0 descriptions mean: `x-nullable` beside a `$ref`, on an
    /// `allOf` wrapper and on an enum; an `id` member that is no base URI (Swagger 1.2 models'
    /// leftover); nested arrays split twice; `allowEmptyValue`.
    @Test("What 2.0 tools write is read as they mean it")
    func whatTwoPointZeroToolsWrite() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: 2.0
                info: {title: t, version: '1'}
                paths:
                  /grid/{id}:
                    get:
                      parameters:
                        - {name: id, in: path, type: integer}
                        - {name: rows, in: query, type: array, collectionFormat: pipes,
                           items: {type: array, collectionFormat: csv, items: {type: integer}}}
                        - {name: q, in: query, type: integer, allowEmptyValue: true}
                        - {name: n, in: query, type: integer, maximum: 5}
                        - {name: a, in: body, schema: {type: object}}
                        - {name: b, in: body, schema: {type: array}}
                        - {name: c, in: bodyy, type: string}
                      responses:
                        '200':
                          description: ok
                          schema: {$ref: '#/definitions/Thing'}
                        '201':
                          description: a file
                          schema: {type: file}
                definitions:
                  Thing:
                    id: Thing
                    type: object
                    properties:
                      owner: {$ref: '#/definitions/Owner', x-nullable: true}
                      parent: {allOf: [{$ref: '#/definitions/Owner'}], x-nullable: true}
                      status: {type: string, enum: [on, off], x-nullable: true}
                      other: {$ref: '#/definitions/Owner'}
                  Owner:
                    id: Owner
                    type: object
                    required: [name]
                    properties: {name: {type: string}}
                """)
        #expect(
            contract.warnings.map(\.message).sorted() == [
                "a parameter in \"bodyy\", not path, query, header, body or formData (ignored)",
                "id is no keyword of OpenAPI 3.0's (or 2.0's) Schema Object, not a base URI: $refs beside it resolve against the document (said once)",
                "more than one body parameter: the first is the request body",
                "path parameter id does not say required: true (read as required)",
                "swagger is the string \"2.0\", not a number (quote it): read as 2.0",
            ])
        let schema = try #require(
            contract.checkResponse(
                method: "GET", path: "/grid/1", status: 200, headers: [("Content-Type", "application/json")]
            ).bodySchema)
        #expect(
            schema.validate(Array(#"{"owner": null, "parent": null, "status": null, "other": {"name": "x"}}"#.utf8))
                .passed)
        #expect(
            schema.validate(Array(#"{"owner": {}, "other": null, "status": "dim"}"#.utf8)).violations.map(\.pointer)
                .sorted() == ["/other", "/owner", "/status"])
        func violations(_ query: String) -> [String] {
            contract.checkRequest(method: "GET", path: "/grid/1", query: query, headers: [], hasBody: false)
                .violations.map { "\($0.pointer) \($0.keyword)" }
        }
        #expect(violations("rows=1,2%7C3,4&q=") == [])
        #expect(violations("rows=1,x|3&q") == ["query:rows/0/1 type"])
        #expect(violations("q=x") == ["query:q type"])
        // A parameter's violation names the parameter where it is written.
        let broken = contract.checkRequest(method: "GET", path: "/grid/1", query: "n=9", headers: [], hasBody: false)
        #expect(broken.violations.first?.schema == "#/paths/~1grid~1{id}/get/parameters/3")
        #expect(contract.findings.allSatisfy { !$0.message.contains("without a schema") }, "\(contract.findings)")
    }

    @Test("Kubernetes' IntOrString (format: int-or-string, x-kubernetes-int-or-string) takes an integer or a string")
    func kubernetesIntOrString() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: k8s, version: '1'}
                paths:
                  /api/v1/services/{name}:
                    get:
                      parameters: [{name: name, in: path, required: true, type: string}]
                      responses:
                        '200': {description: ok, schema: {$ref: '#/definitions/ServicePort'}}
                definitions:
                  IntOrString: {type: string, format: int-or-string}
                  ServicePort:
                    type: object
                    properties:
                      targetPort: {$ref: '#/definitions/IntOrString'}
                      maxSurge: {x-kubernetes-int-or-string: true}
                      name: {type: string}
                """)
        let schema = try #require(
            contract.checkResponse(
                method: "GET", path: "/api/v1/services/web", status: 200,
                headers: [("Content-Type", "application/json")]
            ).bodySchema)
        #expect(schema.validate(Array(#"{"targetPort": 8080, "maxSurge": 1, "name": "web"}"#.utf8)).passed)
        #expect(schema.validate(Array(#"{"targetPort": "http", "maxSurge": "25%"}"#.utf8)).passed)
        #expect(
            schema.validate(Array(#"{"targetPort": true, "maxSurge": [1], "name": 7}"#.utf8)).violations.map(\.pointer)
                .sorted() == ["/maxSurge", "/name", "/targetPort"])
    }

    @Test("A body beside form parameters, or a second body, inherited from the path item is said too")
    func inheritedBodyConflicts() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: t, version: '1'}
                paths:
                  /form:
                    parameters: [{name: b, in: body, schema: {type: object}}]
                    post:
                      parameters: [{name: f, in: formData, type: string}]
                      responses: {'200': {description: ok}}
                  /two:
                    parameters: [{name: b, in: body, schema: {type: object}}]
                    post:
                      parameters: [{name: c, in: body, schema: {type: array}}]
                      responses: {'200': {description: ok}}
                    put:
                      parameters: [{name: b, in: body, schema: {type: array}}]
                      responses: {'200': {description: ok}}
                """)
        // (`put` overrides the path item's `b`: one body, nothing said.)
        #expect(
            contract.warnings.map(\.message).sorted() == [
                "a body parameter beside formData parameters (with the path item's): the body parameter is read",
                "more than one body parameter (with the path item's): the first is the request body",
            ])
    }

    @Test(
        "Azure's conventions: a path parameter with x-ms-skip-url-encoding spans segments; x-ms-enum modelAsString is no limit"
    )
    func azureConventions() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: arm, version: '1'}
                paths:
                  /{scope}/providers/Microsoft.EventGrid/eventSubscriptions/{name}:
                    get:
                      parameters:
                        - {name: scope, in: path, required: true, type: string, x-ms-skip-url-encoding: true}
                        - {name: name, in: path, required: true, type: string}
                      responses:
                        '200': {description: ok, schema: {$ref: '#/definitions/Subscription'}}
                  /{id}:
                    get:
                      operationId: getById
                      parameters:
                        - {name: id, in: path, required: true, type: string, x-ms-skip-url-encoding: true}
                      responses: {'200': {description: ok}}
                  /subscriptions/{subscriptionId}/providers/Microsoft.EventGrid/eventSubscriptions/{name}:
                    put:
                      parameters:
                        - {name: subscriptionId, in: path, required: true, type: string}
                        - {name: name, in: path, required: true, type: string}
                      responses:
                        '200': {description: ok}
                definitions:
                  Subscription:
                    type: object
                    properties:
                      provisioningState:
                        type: string
                        enum: [Creating, Succeeded]
                        x-ms-enum: {name: State, modelAsString: true}
                      kind: {type: string, enum: [A, B], x-ms-enum: {name: Kind, modelAsString: false}}
                """)
        func operation(_ method: String, _ path: String) -> String? {
            guard case .operation(let found, let parameters) = contract.match(method: method, path: path) else {
                return nil
            }
            return "\(found.template) scope=\(parameters["scope"] ?? "-") name=\(parameters["name"] ?? "-")"
        }
        let scoped = "/{scope}/providers/Microsoft.EventGrid/eventSubscriptions/{name}"
        // The scope as Azure's SDKs send it: its slashes as they are.
        #expect(
            operation("GET", "/subscriptions/s1/resourceGroups/g/providers/Microsoft.EventGrid/eventSubscriptions/e")
                == "\(scoped) scope=subscriptions/s1/resourceGroups/g name=e")
        #expect(
            operation("GET", "/s1/providers/Microsoft.EventGrid/eventSubscriptions/e") == "\(scoped) scope=s1 name=e")
        #expect(
            operation("GET", "/subscriptions%2Fs1/providers/Microsoft.EventGrid/eventSubscriptions/e")
                == "\(scoped) scope=subscriptions/s1 name=e")
        // A catch-all (`/{id}`, spanning) takes what nothing more literal fits.
        #expect(
            operation("GET", "/providers/Microsoft.EventGrid/eventSubscriptions/e")?.hasPrefix("/{id} ") == true)
        #expect(operation("GET", "//x/providers/Microsoft.EventGrid/eventSubscriptions/e") == nil)
        // Where both fit, the template with more literal segments wins for its method.
        #expect(
            operation("PUT", "/subscriptions/s1/providers/Microsoft.EventGrid/eventSubscriptions/e")
                == "/subscriptions/{subscriptionId}/providers/Microsoft.EventGrid/eventSubscriptions/{name} scope=- name=e"
        )
        let schema = try #require(
            contract.checkResponse(
                method: "GET", path: "/a/b/providers/Microsoft.EventGrid/eventSubscriptions/e", status: 200,
                headers: [("Content-Type", "application/json")]
            ).bodySchema)
        #expect(schema.validate(Array(#"{"provisioningState": "Migrating", "kind": "A"}"#.utf8)).passed)
        #expect(schema.validate(Array(#"{"provisioningState": 3}"#.utf8)).violations.map(\.keyword) == ["type"])
        #expect(schema.validate(Array(#"{"kind": "C"}"#.utf8)).violations.map(\.keyword) == ["enum"])
    }

    @Test("A Kubernetes watch is a stream of events: not the list's schema; each line a watch operation's event")
    func kubernetesWatches() throws {
        // Given list and watch operations documented with `application/json;stream=watch`.
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: k8s, version: v1}
                paths:
                  /api/v1/namespaces/{namespace}/pods:
                    get:
                      parameters: [{name: namespace, in: path, required: true, type: string}]
                      produces: [application/json, application/yaml, application/json;stream=watch]
                      responses: {'200': {description: OK, schema: {type: object, required: [items]}}}
                  /api/v1/watch/namespaces/{namespace}/pods:
                    get:
                      parameters: [{name: namespace, in: path, required: true, type: string}]
                      produces: [application/json, application/json;stream=watch]
                      responses: {'200': {description: OK, schema: {type: object, required: [type, object]}}}
                """)
        let json = [("Content-Type", "application/json")]
        // When a list is asked for as a watch, then its body is not held to the list's schema.
        let watched = contract.checkResponse(
            method: "GET", path: "/api/v1/namespaces/default/pods?watch=true&resourceVersion=1", status: 200,
            headers: json)
        #expect(watched.bodySchema == nil && watched.sequence == nil)
        #expect(watched.bodyNotValidated?.hasPrefix("a watch stream") == true)
        // When the list is asked for, then it is.
        let listed = contract.checkResponse(
            method: "GET", path: "/api/v1/namespaces/default/pods?limit=5", status: 200, headers: json)
        #expect(listed.bodySchema != nil && listed.bodyNotValidated == nil)
        // When a watch operation answers, then each line is an event checked on its own.
        var events = try #require(
            contract.checkResponse(
                method: "GET", path: "/api/v1/watch/namespaces/default/pods", status: 200, headers: json
            ).sequence
        ).validation()
        events.feed(Array(#"{"type": "ADDED", "object": {}}\#n{"type": "MODIFIED"}\#n"#.utf8))
        #expect(events.finish().violations.map { "\($0.pointer) \($0.keyword)" } == ["/1 required"])
    }

    @Test("A discriminator's value names the definition the object is: it, or one that inherits it")
    func aDiscriminatorNamesTheDefinitionTheObjectIs() throws {
        // Given a hierarchy (Dog and Cat inherit Animal, Puppy inherits Dog; Cat's value is
        // AutoRest's `x-ms-discriminator-value`), an Animal with friends (Animals too), a Shape
        // no definition inherits and a Tree whose discriminator is not required:
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: zoo, version: '1'}
                paths:
                  /animals:
                    get:
                      responses:
                        '200': {description: ok, schema: {type: array, items: {$ref: '#/definitions/Animal'}}}
                    post:
                      parameters: [{name: a, in: body, schema: {$ref: '#/definitions/Animal'}}]
                      responses: {'204': {description: stored}}
                  /dogs:
                    get:
                      responses:
                        '200': {description: ok, schema: {$ref: '#/definitions/Dog'}}
                  /pets:
                    get:
                      responses:
                        '200': {description: ok, schema: {$ref: '#/definitions/Pet'}}
                  /shapes:
                    get:
                      responses:
                        '200': {description: ok, schema: {$ref: '#/definitions/Shape'}}
                definitions:
                  Animal:
                    type: object
                    discriminator: petType
                    required: [petType, name]
                    properties:
                      petType: {type: string}
                      name: {type: string}
                      friends: {type: array, items: {$ref: '#/definitions/Animal'}}
                    example: {$ref: '#/definitions/Animal', petType: Animal}
                  Dog:
                    allOf:
                      - $ref: '#/definitions/Animal'
                      - {type: object, required: [packSize], properties: {packSize: {type: integer, minimum: 0}}}
                  Puppy:
                    allOf:
                      - $ref: '#/definitions/Dog'
                      - {type: object, properties: {age: {type: integer, maximum: 1}}}
                  Cat:
                    x-ms-discriminator-value: cat
                    allOf:
                      - $ref: '#/definitions/Animal'
                      - {type: object, properties: {indoor: {type: boolean}}}
                  Pet: {type: object, discriminator: kind, required: [kind]}
                  DogPet:
                    x-ms-discriminator-value: dog
                    discriminator: breed
                    required: [breed]
                    allOf: [{$ref: '#/definitions/Pet'}]
                    properties: {breed: {type: string}}
                  Beagle:
                    x-ms-discriminator-value: beagle
                    allOf: [{$ref: '#/definitions/DogPet'}]
                    properties: {ears: {type: integer, maximum: 2}}
                  Shape: {type: object, discriminator: kind, required: [kind]}
                  Tree: {type: object, discriminator: kind, properties: {kind: {type: string}}}
                  Oak: {allOf: [{$ref: '#/definitions/Tree'}]}
                """)
        // Then what cannot be read as polymorphism is said, where it is written:
        #expect(
            contract.warnings.map { "\($0.pointer ?? "") \($0.message)" }.sorted() == [
                "/definitions/Shape/discriminator discriminator kind: no definition here inherits Shape (lists it in its allOf), so its value is not checked",
                "/definitions/Tree/discriminator discriminator kind is not in required (Swagger 2.0 says it must be): an object without it is checked as Tree only",
            ])
        let json = [("Content-Type", "application/json")]
        let animals = try #require(
            contract.checkResponse(method: "GET", path: "/animals", status: 200, headers: json).bodySchema)
        func violations(_ body: String, _ schema: SchemaValidator? = nil) -> [String] {
            let schema = schema ?? animals
            let whole = schema.validate(Array(body.utf8))
            // Fed byte by byte (the proxy's streaming path), the verdict is the same.
            var streamed = schema.validation()
            for byte in body.utf8 { streamed.feed([byte]) }
            #expect(streamed.finish().violations.map(\.description) == whole.violations.map(\.description))
            return whole.violations.map { "\($0.pointer) \($0.keyword)" }
        }
        // When each value is checked, then the object is checked as the definition it names:
        #expect(
            violations(#"[{"petType": "Animal", "name": "a"}, {"petType": "Dog", "name": "d", "packSize": 2}]"#) == [])
        #expect(violations(#"[{"petType": "Dog", "name": "d", "packSize": -1}]"#) == ["/0/packSize minimum"])
        #expect(violations(#"[{"petType": "Dog", "name": "d"}]"#) == ["/0 required"])
        #expect(violations(#"[{"petType": "Puppy", "name": "p", "packSize": 1, "age": 3}]"#) == ["/0/age maximum"])
        #expect(violations(#"[{"petType": "Puppy", "name": "p", "age": 0}]"#) == ["/0 required"])
        // (Cat's value is its x-ms-discriminator-value, not its name.)
        #expect(violations(#"[{"petType": "cat", "name": "c", "indoor": "yes"}]"#) == ["/0/indoor type"])
        #expect(violations(#"[{"petType": "Cat", "name": "c"}]"#) == [])  // (any heir's name, as 2.0 says)
        #expect(violations(#"[{"petType": "Unicorn", "name": "u"}]"#) == ["/0 discriminator"])
        // An object without the property is checked as Animal (which requires it).
        #expect(violations(#"[{"name": "x"}]"#) == ["/0 required"])
        // A reference inside the hierarchy dispatches too (a friend is any Animal).
        #expect(
            violations(
                #"[{"petType": "Animal", "name": "a", "friends": [{"petType": "Dog", "name": "d", "packSize": -2}]}]"#)
                == ["/0/friends/0/packSize minimum"])
        // A Dog asked for by name is a Dog: its Animal part checked, no dispatch beyond it.
        let dog = try #require(
            contract.checkResponse(method: "GET", path: "/dogs", status: 200, headers: json).bodySchema)
        #expect(violations(#"{"petType": "Dog", "name": "d", "packSize": 1}"#, dog) == [])
        #expect(violations(#"{"petType": "Dog", "packSize": 1}"#, dog) == [" required"])
        // The request body too.
        let posted = contract.checkRequest(method: "POST", path: "/animals", query: "", headers: json, hasBody: true)
        let requestSchema = try #require(posted.bodySchema)
        #expect(violations(#"{"petType": "Unicorn", "name": "u"}"#, requestSchema) == [" discriminator"])
        // AutoRest's nested hierarchies: DogPet is a Pet of kind "dog" whose breed names the rest
        // (Beagle's `x-ms-discriminator-value` is for breed, the discriminator nearest above it).
        let pets = try #require(
            contract.checkResponse(method: "GET", path: "/pets", status: 200, headers: json).bodySchema)
        #expect(violations(#"{"kind": "dog", "breed": "beagle", "ears": 1}"#, pets) == [])
        #expect(violations(#"{"kind": "dog", "breed": "beagle", "ears": 3}"#, pets) == ["/ears maximum"])
        #expect(violations(#"{"kind": "dog", "breed": "husky"}"#, pets) == [" discriminator"])
        #expect(violations(#"{"kind": "Beagle", "breed": "Beagle", "ears": 2}"#, pets) == [])
        #expect(violations(#"{"kind": "beagle", "breed": "beagle"}"#, pets) == [" discriminator"])
        #expect(violations(#"{"kind": "fish"}"#, pets) == [" discriminator"])
        // A discriminator nothing inherits checks nothing beyond its own schema.
        let shapes = try #require(
            contract.checkResponse(method: "GET", path: "/shapes", status: 200, headers: json).bodySchema)
        #expect(violations(#"{"kind": "Circle"}"#, shapes) == [])
    }

    @Test("Definitions whose allOfs list one another in a loop, discriminators among them, load")
    func discriminatorsInALoop() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                swagger: '2.0'
                info: {title: loop, version: '1'}
                paths:
                  /x:
                    get:
                      responses: {'200': {description: ok, schema: {$ref: '#/definitions/X'}}}
                definitions:
                  X: {type: object, discriminator: kind, required: [kind]}
                  A: {discriminator: a, allOf: [{$ref: '#/definitions/B'}]}
                  B: {discriminator: b, allOf: [{$ref: '#/definitions/A'}, {$ref: '#/definitions/X'}]}
                """)
        let schema = try #require(
            contract.checkResponse(
                method: "GET", path: "/x", status: 200, headers: [("Content-Type", "application/json")]
            ).bodySchema)
        #expect(schema.validate(Array(#"{"kind": "X"}"#.utf8)).passed)
        #expect(!schema.validate(Array(#"{"kind": "nothing"}"#.utf8)).passed)
    }

    @Test("Other Swagger versions are refused")
    func otherSwaggerVersionsAreRefused() {
        // Given a Swagger 1.2 document, when it is loaded, then it is refused saying what is read.
        let error = #expect(throws: ContractError.self) {
            try OpenAPITests.load(yaml: "swagger: '1.2'\ninfo: {title: t, version: '1'}\npaths: {}\n")
        }
        #expect(
            error?.message.contains("Sluice reads Swagger 2.0 and OpenAPI 3.0 to 3.2") == true,
            "\(String(describing: error))")
    }
}
