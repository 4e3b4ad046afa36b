import Contract
import Foundation
import Testing

/// What OpenAPI 3.2 adds that a proxy checks: the `query` operation, `additionalOperations`,
/// `itemSchema` on sequential media types (JSON Lines, JSON text sequences, server-sent events)
/// and `schema` on such a body read as the array of its items.
@Suite("OpenAPI 3.2")
struct OpenAPI32Tests {
    static let streams = """
        openapi: 3.2.0
        info: {title: streams, version: '1'}
        paths:
          /logs:
            get:
              responses:
                '200':
                  description: log entries as they happen
                  content:
                    application/jsonl:
                      itemSchema: {$ref: '#/components/schemas/Entry'}
                    application/x-ndjson:
                      itemSchema: {$ref: '#/components/schemas/Entry'}
                    application/json-seq:
                      itemSchema: {$ref: '#/components/schemas/Entry'}
                    application/json:
                      schema: {type: array, items: {$ref: '#/components/schemas/Entry'}}
          /excerpt:
            get:
              responses:
                '200':
                  description: at most two entries
                  content:
                    application/jsonl:
                      schema: {type: array, maxItems: 2, items: {$ref: '#/components/schemas/Entry'}}
          /events:
            get:
              responses:
                '200':
                  description: an event stream
                  content:
                    text/event-stream:
                      itemSchema:
                        type: object
                        required: [data]
                        properties:
                          data: {type: string, pattern: '^[a-z \\n]*$'}
                          event: {enum: [tick, done]}
                          id: {type: string}
                          retry: {type: integer, maximum: 10000}
          /search:
            query:
              operationId: search
              requestBody:
                content:
                  application/json:
                    schema: {type: object, required: [q]}
              responses:
                '200': {description: found}
            additionalOperations:
              PURGE:
                operationId: purge
                responses:
                  '204': {description: gone}
              POST:
                responses:
                  '200': {description: in the wrong place}
        components:
          schemas:
            Entry:
              type: object
              required: [level, message]
              properties:
                level: {type: integer, minimum: 0}
                message: {type: string}
        """

    func contract() throws -> OpenAPIContract { try OpenAPITests.load(yaml: Self.streams) }

    /// The verdict on `body` (fed `piece` bytes at a time) as a `type` response to `GET path`.
    func verdict(_ body: String, type: String, path: String, piece: Int = .max) throws -> Verdict {
        try verdict(Array(body.utf8), type: type, path: path, piece: piece)
    }

    func verdict(_ body: [UInt8], type: String, path: String, piece: Int = .max) throws -> Verdict {
        let check = try contract().checkResponse(
            method: "GET", path: path, status: 200, headers: [("Content-Type", type)])
        #expect(check.undocumented.isEmpty, "\(check.undocumented)")
        #expect(check.bodySchema == nil)
        var validation = try #require(check.sequence).validation(limit: 4096)
        var start = 0
        while start < body.count {
            let end = min(body.count, start + min(piece, body.count - start))
            validation.feed(Array(body[start..<end]))
            start = end
        }
        return validation.finish()
    }

    @Test("Each JSON line is an item checked on its own, whatever the pieces it comes in")
    func eachJSONLineIsAnItemCheckedOnItsOwn() throws {
        let body = """
            {"level": 1, "message": "up"}

            {"level": -1, "message": "down"}
            {"level": 2}
            {"level": 3, "message": "ok"}\r
            not json
            {"level": 4, "message": "last, without a newline"}
            """
        for piece in [Int.max, 7, 1] {
            for type in ["application/jsonl", "application/x-ndjson; charset=utf-8"] {
                let verdict = try verdict(body, type: type, path: "/logs", piece: piece)
                #expect(
                    verdict.violations.map { "\($0.pointer) \($0.keyword)" } == [
                        "/1/level minimum", "/2 required", "/4 json",
                    ], "\(type), pieces of \(piece)")
            }
        }
        #expect(try verdict("", type: "application/jsonl", path: "/logs").passed)
        #expect(try verdict("\n\n", type: "application/jsonl", path: "/logs").passed)
        // A value across two lines is not JSON Lines: each line is JSON on its own.
        let split = try verdict("{\"level\": 1,\n\"message\": \"x\"}\n", type: "application/jsonl", path: "/logs")
        #expect(split.violations.filter { $0.keyword == "json" }.map { $0.pointer.prefix(2) } == ["/0", "/1"])
    }

    @Test("JSON text sequences are read by their record separators")
    func jSONTextSequencesAreReadByRecordSeparators() throws {
        let rs = "\u{1E}"
        let body =
            "\(rs){\n  \"level\": 1,\n  \"message\": \"a\"\n}\n\(rs)\(rs){\"level\": \"x\", \"message\": \"b\"}\n"
        for piece in [Int.max, 3, 1] {
            let verdict = try verdict(body, type: "application/json-seq", path: "/logs", piece: piece)
            #expect(verdict.violations.map { "\($0.pointer) \($0.keyword)" } == ["/1/level type"], "\(piece)")
        }
        // Text before the first separator is no record (RFC 7464 §2.1).
        let stray = try verdict(
            "{\"level\": 1}\n\(rs){\"level\": 1, \"message\": \"a\"}\n", type: "application/json-seq", path: "/logs")
        #expect(stray.violations.map { "\($0.pointer) \($0.keyword)" } == ["/0 json"])
    }

    @Test("A schema on a sequence sees its items as an array")
    func aSchemaOnASequenceSeesItsItemsAsAnArray() throws {
        let two = "{\"level\": 1, \"message\": \"a\"}\n{\"level\": 2, \"message\": \"b\"}\n"
        #expect(try verdict(two, type: "application/jsonl", path: "/excerpt").passed)
        let three = try verdict(two + "{\"level\": 3}\n", type: "application/jsonl", path: "/excerpt", piece: 5)
        #expect(three.violations.map { "\($0.pointer) \($0.keyword)" } == ["/2 required", " maxItems"])
    }

    /// Events as the HTML standard reads them: fields split at the first colon, one space
    /// dropped, `data` lines joined by LF, comments and unknown fields ignored, CRLF, LF and CR
    /// line ends, a leading BOM, `retry` only when all digits, an event without data never
    /// dispatched, an unfinished one at the end discarded.
    @Test("Server-sent events are checked as the objects OpenAPI models them as")
    func serverSentEventsAreCheckedAsTheObjectsOpenAPIModels() throws {
        let stream =
            "\u{FEFF}: a comment\n"
            + "event: tick\ndata: one\ndata:two\nid: 7\nretry: 3000\n\n"
            + "event: tick\n\n"
            + "data: bad: Upper Case\r\nretry: soon\r\n\r\n"
            + "event: boom\rdata\r\r"
            + "data: fine\nfoo: ignored\nretry: 99999\n\n"
            + "data: unfinished, NOT checked\n"
        for piece in [Int.max, 5, 1] {
            let verdict = try verdict(stream, type: "text/event-stream", path: "/events", piece: piece)
            #expect(
                verdict.violations.map { "\($0.pointer) \($0.keyword)" } == [
                    "/1/data pattern", "/2/event enum", "/3/retry maximum",
                ], "pieces of \(piece): \(verdict.violations)")
        }
        // `data` is text: "one\ntwo" matched the pattern with its LF; `retry: soon` was ignored.
        let fine = try verdict("data: a\ndata: b\nretry: 0042\n\n", type: "text/event-stream", path: "/events")
        #expect(fine.passed, "\(fine.violations)")
    }

    @Test("An event over the limit is not checked, and said so")
    func anEventOverTheLimitIsNotCheckedAndSaidSo() throws {
        let big = "data: " + String(repeating: "x", count: 5000) + "\n\n" + "data: ok\nevent: nope\n\n"
        let verdict = try verdict(big, type: "text/event-stream", path: "/events", piece: 1000)
        #expect(verdict.violations.map { "\($0.pointer) \($0.keyword)" } == ["/1/event enum"])
        #expect(verdict.notes == ["1 event larger than 4096 bytes not checked"])
    }

    @Test("The QUERY method and additionalOperations are operations")
    func theQueryMethodAndAdditionalOperationsAreOperations() throws {
        let contract = try contract()
        #expect(contract.operation(id: "search")?.method == "QUERY")
        #expect(contract.operation(id: "purge")?.method == "PURGE")
        let request = contract.checkRequest(
            method: "QUERY", path: "/search", query: nil, headers: [("content-type", "application/json")],
            hasBody: true)
        #expect(request.operationId == "search")
        #expect(try #require(request.bodySchema).validate(Array("{}".utf8)).violations.map(\.keyword) == ["required"])
        #expect(
            contract.checkResponse(method: "PURGE", path: "/search", status: 204, headers: []).operationId == "purge")
        // `POST` belongs in the `post` field: said, and not an operation.
        #expect(
            contract.warnings.contains { $0.message.contains("POST belongs in the path item's post field") },
            "\(contract.warnings)")
        #expect(
            contract.checkResponse(method: "POST", path: "/search", status: 200, headers: []).undocumented.map(
                \.keyword) == ["undocumented-operation"])
        #expect(!(contract.warnings.contains { $0.message.contains("read as 3.1") }))
    }

    /// What a proxy cutting a stream needs to know as each piece passes: a violation inside the
    /// item in progress (a record that its next separator has not closed yet), an item past the
    /// whole's `maxItems`, and how many bytes of the piece come before the broken item.
    @Test("Violations are known as the piece that carries them passes")
    func violationsAreKnownAsThePieceThatCarriesThemPasses() throws {
        let contract = try contract()
        func validation(_ path: String, _ type: String) throws -> SequenceValidation {
            try #require(
                contract.checkResponse(method: "GET", path: path, status: 200, headers: [("Content-Type", type)])
                    .sequence
            ).validation(limit: 4096)
        }
        var records = try validation("/logs", "application/json-seq")
        records.feed(Array("\u{1E}{\"level\": 1, \"message\": \"a\"}\n".utf8))
        #expect(!(records.hasViolations))
        #expect(records.cleanPrefix == nil)
        records.feed(Array("\u{1E}{\"level\": 1, \"message\": \"b\"}\n\u{1E}{\"level\": \"x\"".utf8))
        #expect(records.hasViolations)
        #expect(records.verdictSoFar.violations.map(\.pointer) == ["/2/level"])
        #expect(records.cleanPrefix == 31, "the second record goes out whole, the third not")
        var lines = try validation("/excerpt", "application/jsonl")
        lines.feed(Array("{\"level\": 1, \"message\": \"a\"}\n{\"level\": 2, \"message\": \"b\"}\n{\"le".utf8))
        #expect(lines.verdictSoFar.violations.map(\.keyword) == ["maxItems"])
        #expect(lines.cleanPrefix == 58)
        var events = try validation("/events", "text/event-stream")
        events.feed(Array("data: a\n\n: note\ndata: b\r\n\r\ndata: BAD\n\ndata: c\n\n".utf8))
        #expect(events.verdictSoFar.violations.map(\.pointer) == ["/2/data"])
        #expect(events.cleanPrefix == 27)
        // RFC 7464 §2.4: a last number without its line feed may be cut short.
        var truncated = try OpenAPITests.load(
            yaml: """
                openapi: 3.2.0
                info: {title: n, version: '1'}
                paths:
                  /n:
                    get:
                      responses:
                        '200': {description: n, content: {application/json-seq: {itemSchema: {type: integer}}}}
                """
        ).checkResponse(method: "GET", path: "/n", status: 200, headers: [("Content-Type", "application/json-seq")])
            .sequence!.validation()
        truncated.feed(Array("\u{1E}1\n\u{1E}12".utf8))
        #expect(truncated.finish().violations.map { "\($0.pointer) \($0.keyword)" } == ["/1 json"])
    }

    /// Hostile streams stay bounded and an event over the limit is no array element: `data:` lines
    /// without end count against the limit; the whole (`schema`) still sees a well-formed array.
    @Test("Oversize events are bounded and leave the whole well formed")
    func oversizeEventsAreBoundedAndLeaveTheWholeWellFormed() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                openapi: 3.2.0
                info: {title: e, version: '1'}
                paths:
                  /e:
                    get:
                      responses:
                        '200':
                          description: e
                          content:
                            text/event-stream:
                              schema: {type: array, items: {type: object, required: [data]}}
                  /n:
                    get:
                      responses:
                        '200': {description: n, content: {application/json-seq: {itemSchema: {type: integer}}}}
                """)
        var events = try #require(
            contract.checkResponse(
                method: "GET", path: "/e", status: 200, headers: [("Content-Type", "text/event-stream")]
            ).sequence
        ).validation(limit: 100)
        events.feed(Array(String(repeating: "data:\n", count: 10_000).utf8))
        events.feed(Array("\ndata: ok\n\n".utf8))
        let verdict = events.finish()
        #expect(verdict.passed, "\(verdict.violations)")
        #expect(events.skippedEvents == 1)
        // A number right before the next separator may be cut short (RFC 7464 §2.4).
        var records = try #require(
            contract.checkResponse(
                method: "GET", path: "/n", status: 200, headers: [("Content-Type", "application/json-seq")]
            ).sequence
        ).validation()
        records.feed(Array("\u{1E}12\u{1E}13\n".utf8))
        #expect(records.finish().violations.map { "\($0.pointer) \($0.keyword)" } == ["/0 json"])
    }

    /// `in: querystring`: the whole query, read as its media type says.
    @Test("A querystring parameter is the whole query")
    func aQuerystringParameterIsTheWholeQuery() throws {
        let contract = try OpenAPITests.load(
            yaml: """
                openapi: 3.2.0
                info: {title: q, version: '1'}
                paths:
                  /form:
                    get:
                      parameters:
                        - in: querystring
                          name: filter
                          required: true
                          content:
                            application/x-www-form-urlencoded:
                              schema:
                                type: object
                                required: [foo]
                                additionalProperties: false
                                properties:
                                  foo: {type: string, maxLength: 5}
                                  bar: {type: boolean}
                                  ids: {type: array, items: {type: integer}}
                      responses: {'200': {description: ok}}
                  /json:
                    get:
                      parameters:
                        - in: querystring
                          name: json
                          content:
                            application/json:
                              schema:
                                type: object
                                properties: {numbers: {type: array, items: {type: integer}}}
                      responses: {'200': {description: ok}}
                  /path:
                    get:
                      parameters:
                        - in: querystring
                          name: selector
                          content:
                            application/jsonpath:
                              schema: {type: string, pattern: '^\\$'}
                      responses: {'200': {description: ok}}
                """)
        func violations(_ path: String, _ query: String?) -> [String] {
            contract.checkRequest(method: "GET", path: path, query: query, headers: [], hasBody: false).violations.map {
                "\($0.pointer) \($0.keyword)"
            }
        }
        #expect(violations("/form", "foo=a+b&bar=true&ids=1&ids=2") == [])
        #expect(violations("/form", "foo=a+%2B+b&ids=3") == [])
        #expect(
            violations("/form", "foo=toolong&bar=maybe&ids=x&other=1") == [
                "querystring:filter/foo maxLength", "querystring:filter/bar type", "querystring:filter/ids/0 type",
                "querystring:filter/other additionalProperties",
            ])
        #expect(violations("/form", nil) == ["querystring:filter required"])
        #expect(violations("/json", "%7B%22numbers%22%3A%5B1%2C2%5D%7D") == [])
        #expect(violations("/json", "%7B%22numbers%22%3A%5B%22a%22%5D%7D") == ["querystring:json/numbers/0 type"])
        #expect(violations("/json", nil) == [])
        #expect(violations("/path", "%24.a.b") == [])
        #expect(violations("/path", "a.b") == ["querystring:selector pattern"])
    }

    /// `$self` names a document: its references resolve against it, and documents under the same
    /// folder are read from the checkout's files (OAS 3.2 Appendix F's example).
    @Test("$self is the document's base URI")
    func selfIsTheDocumentsBaseURI() throws {
        let contract = try OpenAPITests.load(files: [
            "api.yaml": Array(
                """
                openapi: 3.2.0
                $self: https://example.com/api/openapi
                info: {title: Example API, version: '1.0'}
                paths:
                  /foo:
                    post:
                      requestBody:
                        $ref: "shared/foo#/components/requestBodies/Foo"
                      responses:
                        '200':
                          description: ok
                          content:
                            application/json:
                              schema: {$ref: '#/components/schemas/Local'}
                components:
                  schemas:
                    Local: {type: integer}
                """.utf8),
            "shared/foo.yaml": Array(
                """
                openapi: 3.2.0
                $self: https://example.com/api/shared/foo
                info: {title: Shared components for all APIs, version: '1.0'}
                components:
                  requestBodies:
                    Foo:
                      content:
                        application/json:
                          schema:
                            $ref: ../schemas/foo
                  schemas:
                    Foo:
                      $id: https://example.com/api/schemas/foo
                      properties:
                        bar:
                          $ref: bar
                    Bar:
                      $id: https://example.com/api/schemas/bar
                      type: string
                """.utf8),
        ])
        let request = contract.checkRequest(
            method: "POST", path: "/foo", query: nil, headers: [("content-type", "application/json")], hasBody: true)
        let schema = try #require(request.bodySchema)
        #expect(schema.validate(Array(#"{"bar": "x"}"#.utf8)).passed)
        #expect(schema.validate(Array(#"{"bar": 1}"#.utf8)).violations.map(\.pointer) == ["/bar"])
        let response = try #require(
            contract.checkResponse(
                method: "POST", path: "/foo", status: 200, headers: [("content-type", "application/json")]
            ).bodySchema)
        #expect(response.validate(Array("\"x\"".utf8)).violations.map(\.keyword) == ["type"])
    }

    /// Before 3.2 a sequential media type has no items: its body is not validated (3.1 documents
    /// commonly put the schema of one event there), and `query` is no operation.
    @Test("Lint says when itemSchema cannot apply: on a JSON type, or typing an event's fields otherwise")
    func lintOnItemSchemas() throws {
        // Given itemSchema on application/json, and an event schema whose data is an object.
        let contract = try OpenAPITests.load(
            yaml: """
                openapi: 3.2.0
                info: {title: l, version: '1'}
                paths:
                  /a:
                    get:
                      responses:
                        '200':
                          description: a
                          content:
                            application/json: {itemSchema: {type: object}}
                            text/event-stream:
                              itemSchema:
                                type: object
                                properties: {data: {type: object}, retry: {type: string}, id: {type: string}}
                """)
        // Then each is said where it is written.
        #expect(
            contract.warnings.map(\.message) == [
                "itemSchema is for sequential media types (JSON Lines, JSON text sequences, event streams): on application/json it is not read",
                "an event's data is text, never an object: every event fails this schema (describe the JSON it holds with contentMediaType and contentSchema)",
                "an event's retry is an integer, never string: every event fails this schema",
            ])
    }

    @Test("Earlier versions do not read sequences")
    func earlierVersionsDoNotReadSequences() throws {
        let text = Self.streams.replacingOccurrences(of: "openapi: 3.2.0", with: "openapi: 3.1.0")
            .replacingOccurrences(of: "itemSchema", with: "schema")
        let contract = try OpenAPITests.load(yaml: text)
        let check = contract.checkResponse(
            method: "GET", path: "/logs", status: 200, headers: [("Content-Type", "application/jsonl")])
        #expect(check.sequence == nil)
        #expect(check.bodySchema == nil)
        #expect(contract.operation(id: "search") == nil)
    }
}
