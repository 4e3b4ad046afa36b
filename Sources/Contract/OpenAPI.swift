/// An OpenAPI 3.0 or 3.1 document, loaded for validation: its operations by path template and
/// method, each response by status, media type and header, each schema compiled (3.1: JSON
/// Schema 2020-12; 3.0: its Schema Object dialect). Parts validation does not need are not read;
/// parts slightly off the specification are read where their meaning is clear, with a warning.
public final class OpenAPIContract: @unchecked Sendable {
    /// Loads a document file (YAML or JSON); `$ref`s to other files load as needed, `refs` maps
    /// `http(s)://` URIs to local files; `basePath` overrides the first server's path.
    public static func load(
        file path: String, refs: [String: String] = [:], formats: FormatMode = .annotate, basePath: String? = nil
    ) throws(ContractError) -> OpenAPIContract {
        try OpenAPILoader.load(file: path, refs: refs, formats: formats, basePath: basePath)
    }

    public let version: String
    public let title: String
    /// The prefix removed from request paths before matching (`/v2`).
    public let basePath: String
    /// Every base path the document's `servers` give (or the configured one): a request under
    /// any of them is matched.
    public let basePaths: [String]
    /// These and the operations' own.
    let allBases: [String]
    public let operations: [Operation]
    /// Said once at load: parts ignored or read leniently, with file and pointer.
    public let warnings: [ContractError]
    let graph: SchemaGraph

    /// One operation (method + path template).
    public final class Operation: @unchecked Sendable {
        public let id: String?
        public let method: String
        public let template: String
        let segments: [Segment]
        let parameters: [Parameter]
        let requestBody: Body?
        let responses: [(key: String, response: Response)]
        /// Where the operation is written (its own file when `paths` names it by `$ref`).
        public let place: SourcePlace
        /// The base paths of its own `servers` (the operation's, else its path item's; OAS
        /// §4.7.9, §4.7.10); `nil`: the document's.
        let bases: [String]?
        /// Whether a segment of it spans several of the request's (at most one does).
        let spans: Bool

        init(
            id: String?, method: String, template: String, segments: [Segment], parameters: [Parameter],
            requestBody: Body?, responses: [(String, Response)], place: SourcePlace, bases: [String]? = nil
        ) {
            self.bases = bases
            spans = segments.contains { if case .spanning = $0 { true } else { false } }
            self.place = place
            self.id = id
            self.method = method
            self.template = template
            self.segments = segments
            self.parameters = parameters
            self.requestBody = requestBody
            self.responses = responses.map { (key: $0.0, response: $0.1) }
        }

        /// The response documented for `status`: the exact code, then its `2XX` range, then `default`.
        func response(for status: Int) -> Response? {
            let code = String(status)
            let range = String(code.prefix(1)) + "XX"
            return responses.first(where: { $0.key == code })?.response
                ?? responses.first(where: { $0.key.uppercased() == range })?.response
                ?? responses.first(where: { $0.key == "default" })?.response
        }

        /// `getPet (GET /pets/{id})`.
        public var name: String { (id.map { $0 + " " } ?? "") + "(\(method) \(template))" }

        /// The documented response keys, as written (`200`, `4XX`, `default`).
        public var documentedStatuses: [String] { responses.map(\.key) }

        /// The documented key a status is answered under (exact, then its range, then `default`).
        public func documentedKey(for status: Int) -> String? {
            let code = String(status)
            let range = String(code.prefix(1)) + "XX"
            return responses.first(where: { $0.key == code })?.key
                ?? responses.first(where: { $0.key.uppercased() == range })?.key
                ?? responses.first(where: { $0.key == "default" })?.key
        }
    }

    enum Segment {
        case literal(String)
        /// `{name}`, possibly with text around it in the same segment (`{name}.json`).
        case parameter(name: String, prefix: String, suffix: String)
        /// Several expressions in one segment (`{name}.{ext}`, `{from}-{to}`): text and
        /// parameters in turn, each parameter at least one character.
        case pattern([Piece])
        /// `{name}` whose value spans one or more segments (``Parameter/spansSegments``).
        case spanning(name: String)
    }

    enum Piece {
        case text(String)
        case parameter(String)
    }

    /// `pieces` matched against `actual` from `offset`: the parameters' values, or `nil`. A
    /// parameter takes as much as lets the rest match (as `([^/]+)` would).
    static func match(_ pieces: ArraySlice<Piece>, _ actual: Substring) -> [(String, Substring)]? {
        guard let first = pieces.first else { return actual.isEmpty ? [] : nil }
        let rest = pieces.dropFirst()
        switch first {
        case .text(let text):
            guard actual.hasPrefix(text) else { return nil }
            return match(rest, actual.dropFirst(text.count))
        case .parameter(let name):
            var end = actual.endIndex
            while end > actual.startIndex {
                if let found = match(rest, actual[end...]) { return [(name, actual[..<end])] + found }
                end = actual.index(before: end)
            }
            return nil
        }
    }

    struct Parameter {
        /// `querystring` (OAS 3.2): the whole query as one value, described by `content`.
        enum Location: String { case path, query, querystring, header, cookie }
        /// How a `querystring` parameter's media type reads the query.
        enum QueryForm {
            /// `application/x-www-form-urlencoded`: its pairs as an object's members.
            case form
            /// A JSON media type: the decoded query is JSON text.
            case json
            /// Any other: the decoded query as a string.
            case text
        }
        var name: String
        var location: Location
        var required: Bool
        /// Where the Parameter Object is (as messages show places): a missing required one is
        /// located at its `required`.
        var place = ""
        var explode: Bool
        var style: String
        var schema: SchemaValidator?
        var type: String?
        var itemType: String?
        /// An object's property types (`lat` → `number`), for values written as text.
        var propertyTypes: [String: String] = [:]
        /// Described by `content` with a JSON media type: the value is JSON text.
        var jsonContent = false
        /// Array properties' item types (`ids` → `integer`), for form pairs repeated.
        var propertyItemTypes: [String: String] = [:]
        var queryForm: QueryForm?
        /// Swagger 2.0's nested arrays (`items` with a `collectionFormat` of its own: `1,2|3,4`):
        /// how each item is split, and the type of what it holds.
        var innerDelimiters: [String]?
        var innerItemType: String?
        /// `allowEmptyValue: true`: a query parameter sent empty (`?q=`, `?q`) is not checked.
        var allowsEmptyValue = false
        /// AutoRest's `x-ms-skip-url-encoding: true` on a path parameter that is a whole segment
        /// (Azure's `/{scope}/providers/…`, `{resourceUri}`): its value is a path of its own,
        /// sent with its slashes as they are, so it spans one or more segments.
        var spansSegments = false
    }

    /// A request or response body: media ranges and their schemas.
    struct Body {
        var required: Bool
        var content: [Media]
    }

    /// A Media Type Object: its range, its `schema`, and (OAS 3.2) `itemSchema` and how a
    /// sequential media type's items are laid out.
    struct Media {
        var range: String
        var schema: SchemaValidator?
        var itemSchema: SchemaValidator?
        /// The range's framing when it is a sequential media type of an OAS 3.2 document (earlier
        /// versions define no items for them: their bodies are not validated).
        var framing: BodyFraming?
        /// A file (Swagger 2.0's `type: file`): a body of its own type, with no schema to apply.
        var isFile = false
        /// The document's examples of it (`example`, each of `examples` with a value; 2.0's
        /// response `examples` for its type): `contract lint --examples` checks them.
        var examples: [Example] = []

        init(range: String, schema: SchemaValidator? = nil) {
            self.range = range
            self.schema = schema
        }
    }

    /// An example the document gives of a body.
    struct Example {
        /// `example`, or its key in `examples`.
        var name: String
        var value: Value
        var place: SourcePlace
    }

    struct Response {
        /// Header Objects: parameters `in: header` without a name of their own (OAS §4.7.21).
        var headers: [Parameter]
        var body: Body?
        /// Where the response object is (after its `$ref`s).
        var place: SourcePlace
    }

    init(
        version: String, title: String, basePath: String, operations: [Operation], warnings: [ContractError],
        graph: SchemaGraph, basePaths: [String]? = nil
    ) {
        self.version = version
        self.title = title
        self.basePath = basePath
        self.basePaths = basePaths ?? [basePath == "/" ? "" : basePath]
        var all: [String] = []
        for base in self.basePaths + operations.flatMap({ $0.bases ?? [] }) where !all.contains(base) {
            all.append(base)
        }
        allBases = all
        self.operations = operations
        self.warnings = warnings
        self.graph = graph
    }
}

/// What the head checks of a response or a request found, and the schema for its body.
public struct HeadCheck: Sendable {
    /// Broken promises of the document (a required header missing, a header of the wrong type, …).
    public var violations: [Violation] = []
    /// Things the document does not describe (`undocumented-operation`, `-status`, `-content-type`).
    public var undocumented: [Violation] = []
    /// The schema of the body, when it is a JSON media type with one.
    public var bodySchema: SchemaValidator?
    /// The schemas of a sequential body (OAS 3.2 `itemSchema`, or `schema` on the items as an
    /// array): JSON Lines, JSON text sequences, server-sent events.
    public var sequence: SequenceSchemas?
    /// Whether the body is validated at all.
    public var validatesBody: Bool { bodySchema != nil || sequence != nil }
    /// Why a body the document describes is not validated (a Kubernetes watch stream).
    public var bodyNotValidated: String?
    /// The operation, for messages (`getPet (GET /pets/{id})`).
    public var operation: String?
    public var operationId: String?
    public var template: String?

    public init() {}
}

extension OpenAPIContract {
    /// The operation with this `operationId`.
    public func operation(id: String) -> Operation? { operations.first { $0.id == id } }

    /// An operation by its method and path as the document writes them (`GET /pets/{petId}`):
    /// how to name one that has no `operationId`.
    public func operation(method: String, template: String) -> Operation? {
        operations.first { ($0.method == method || $0.method == method.uppercased()) && $0.template == template }
    }

    /// The JSON body schema of an operation's response for `status` (exact, `2XX`, `default`).
    public func responseSchema(of operation: Operation, status: Int) -> SchemaValidator? {
        operation.response(for: status)?.body.flatMap { Self.jsonSchema(of: $0) }
    }

    /// The response schema for a documented key (`200`, `4XX`, `default`; a code is answered as
    /// the proxy answers it: exact, its range, `default`) and, when given, a media type.
    public func responseSchema(of operation: Operation, key: String, mediaType: String? = nil) -> SchemaValidator? {
        let response =
            Int(key).flatMap { operation.response(for: $0) }
            ?? operation.responses.first { $0.key.uppercased() == key.uppercased() }?.response
        return response?.body.flatMap { Self.jsonSchema(of: $0, mediaType: mediaType) }
    }

    /// The documented media types of a response key's body, or of the request body (`key` nil).
    public func mediaTypes(of operation: Operation, key: String?) -> [String] {
        guard let key else { return operation.requestBody?.content.map(\.range) ?? [] }
        let response =
            Int(key).flatMap { operation.response(for: $0) }
            ?? operation.responses.first { $0.key.uppercased() == key.uppercased() }?.response
        return response?.body?.content.map(\.range) ?? []
    }

    /// The schema a JSON body of `content` gets: the range that covers `mediaType` when given
    /// (as the proxy picks by Content-Type), else `application/json`'s, a JSON type's, then a
    /// range's that covers one.
    static func jsonSchema(of content: Body, mediaType: String? = nil) -> SchemaValidator? {
        if let mediaType {
            return MediaRange.pick(mediaType, from: content.content.map(\.range)).flatMap { content.content[$0].schema }
        }
        // As the proxy picks: a JSON type, then `application/*` or `text/*`, then `*/*`.
        return
            (content.content.first { MediaRange.bare($0.range) == "application/json" }
            ?? content.content.first { MediaRange.isJSON($0.range) }
            ?? content.content.first { MediaRange.coversJSON($0.range) && MediaRange.bare($0.range) != "*/*" }
            ?? content.content.first { MediaRange.bare($0.range) == "*/*" })?.schema
    }

    /// The schemas of a sequential body of `mediaType` (OAS 3.2: JSON Lines, JSON text
    /// sequences, event streams) for a response key, or the request body (`key` nil); `nil` when
    /// the type is not sequential or its Media Type Object has neither `schema` nor `itemSchema`.
    public func sequenceSchemas(of operation: Operation, key: String?, mediaType: String) -> SequenceSchemas? {
        let body: Body?
        if let key {
            body =
                (Int(key).flatMap { operation.response(for: $0) }
                ?? operation.responses.first { $0.key.uppercased() == key.uppercased() }?.response)?.body
        } else {
            body = operation.requestBody
        }
        guard let body, let framing = BodyFraming(media: mediaType),
            let index = MediaRange.pick(mediaType, from: body.content.map(\.range)),
            body.content[index].framing != nil,
            body.content[index].schema != nil || body.content[index].itemSchema != nil
        else { return nil }
        return SequenceSchemas(
            framing: framing, whole: body.content[index].schema, item: body.content[index].itemSchema)
    }

    /// The JSON schema of an operation's request body (of `mediaType`'s range, when given).
    public func requestSchema(of operation: Operation, mediaType: String? = nil) -> SchemaValidator? {
        operation.requestBody.flatMap { Self.jsonSchema(of: $0, mediaType: mediaType) }
    }
}
