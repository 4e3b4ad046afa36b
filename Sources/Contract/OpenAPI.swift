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

        init(
            id: String?, method: String, template: String, segments: [Segment], parameters: [Parameter],
            requestBody: Body?, responses: [(String, Response)]
        ) {
            self.id = id
            self.method = method
            self.template = template
            self.segments = segments
            self.parameters = parameters
            self.requestBody = requestBody
            self.responses = responses.map { (key: $0.0, response: $0.1) }
        }

        /// `getPet (GET /pets/{id})`.
        public var name: String { (id.map { $0 + " " } ?? "") + "(\(method) \(template))" }
    }

    enum Segment {
        case literal(String)
        /// `{name}`, possibly with text around it in the same segment (`{name}.json`).
        case parameter(name: String, prefix: String, suffix: String)
    }

    struct Parameter {
        enum Location: String { case path, query, header, cookie }
        var name: String
        var location: Location
        var required: Bool
        var explode: Bool
        var style: String
        var schema: SchemaValidator?
        var type: String?
        var itemType: String?
    }

    /// A request or response body: media ranges and their schemas.
    struct Body {
        var required: Bool
        var content: [(range: String, schema: SchemaValidator?)]
    }

    struct Response {
        var headers: [(name: String, required: Bool, schema: SchemaValidator?, type: String?)]
        var body: Body?
    }

    init(
        version: String, title: String, basePath: String, operations: [Operation], warnings: [ContractError],
        graph: SchemaGraph
    ) {
        self.version = version
        self.title = title
        self.basePath = basePath
        self.operations = operations
        self.warnings = warnings
        self.graph = graph
    }

    // MARK: - Matching

    /// The operation for a request, with its path parameters; or why there is none.
    public enum Match {
        case operation(Operation, pathParameters: [String: String])
        /// The path is documented, the method is not.
        case methodNotDocumented(template: String)
        case pathNotDocumented
        /// The path does not start with the base path.
        case outsideBasePath
    }

    public func match(method: String, path rawPath: String) -> Match {
        var path = rawPath
        if let query = path.firstIndex(of: "?") { path = String(path[..<query]) }
        if !basePath.isEmpty && basePath != "/" {
            guard path == basePath || path.hasPrefix(basePath + "/") else { return .outsideBasePath }
            path = String(path.dropFirst(basePath.count))
            if path.isEmpty { path = "/" }
        }
        let requestSegments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        var best: (rank: [Int], operation: Operation, parameters: [String: String])?
        var pathOnly: String?
        for operation in operations {
            guard operation.segments.count == requestSegments.count else { continue }
            var parameters: [String: String] = [:]
            var rank: [Int] = []
            var matched = true
            for (segment, actual) in zip(operation.segments, requestSegments) {
                switch segment {
                case .literal(let text):
                    if text != actual { matched = false }
                    rank.append(0)
                case .parameter(let name, let prefix, let suffix):
                    guard actual.hasPrefix(prefix), actual.hasSuffix(suffix), actual.count > prefix.count + suffix.count
                    else {
                        matched = false
                        break
                    }
                    let value = actual.dropFirst(prefix.count).dropLast(suffix.count)
                    parameters[name] = SchemaRegistry.percentDecode(String(value))
                    rank.append(prefix.isEmpty && suffix.isEmpty ? 2 : 1)
                }
                if !matched { break }
            }
            guard matched else { continue }
            guard
                operation.method == method.uppercased() || (method.uppercased() == "HEAD" && operation.method == "GET")
            else {
                pathOnly = pathOnly ?? operation.template
                continue
            }
            // Literal segments win over templated ones, left to right.
            if best == nil || rank.lexicographicallyPrecedes(best!.rank) {
                best = (rank, operation, parameters)
            }
        }
        if let best { return .operation(best.operation, pathParameters: best.parameters) }
        if let pathOnly { return .methodNotDocumented(template: pathOnly) }
        return .pathNotDocumented
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
    /// The operation, for messages (`getPet (GET /pets/{id})`).
    public var operation: String?
    public var operationId: String?
    public var template: String?

    public init() {}
}

extension OpenAPIContract {
    /// The checks of a response's head: operation, status, media type, headers.
    public func checkResponse(
        method: String, path: String, status: Int, headers: [(String, String)]
    ) -> HeadCheck {
        var check = HeadCheck()
        guard let (operation, _) = operation(method: method, path: path, into: &check) else { return check }
        let code = String(status)
        let range = String(code.prefix(1)) + "XX"
        guard
            let response = operation.responses.first(where: { $0.key == code })?.response
                ?? operation.responses.first(where: { $0.key.uppercased() == range })?.response
                ?? operation.responses.first(where: { $0.key == "default" })?.response
        else {
            let documented = operation.responses.map(\.key).joined(separator: ", ")
            check.undocumented.append(
                Self.violation("undocumented-status", "one of \(documented) for \(operation.name)", code))
            return check
        }
        let fields = headers.map { ($0.0.lowercased(), $0.1) }
        for header in response.headers {
            let name = header.name.lowercased()
            guard name != "content-type" else { continue }
            let values = fields.filter { $0.0 == name }.map(\.1)
            if values.isEmpty {
                if header.required {
                    check.violations.append(
                        Violation(
                            pointer: "header:\(header.name)", keyword: "required", expected: "header \(header.name)",
                            found: "absent", schema: ""))
                }
                continue
            }
            if let schema = header.schema {
                let verdict = schema.validate(
                    Array(
                        Self.json(values.joined(separator: ","), type: header.type, itemType: nil, explode: false).utf8)
                )
                for violation in verdict.violations {
                    check.violations.append(Self.relocate(violation, to: "header:\(header.name)"))
                }
            }
        }
        if let body = response.body, status != 204, status != 304, method.uppercased() != "HEAD" {
            let contentType = fields.first { $0.0 == "content-type" }?.1
            check.bodySchema = Self.mediaSchema(body, contentType: contentType, into: &check, expected: operation.name)
        }
        return check
    }

    /// The checks of a request's head (path, query and header parameters, the body's media type).
    public func checkRequest(
        method: String, path: String, query: String?, headers: [(String, String)], hasBody: Bool
    ) -> HeadCheck {
        var check = HeadCheck()
        guard let (operation, pathParameters) = operation(method: method, path: path, into: &check) else {
            return check
        }
        let queryItems = Self.queryItems(query)
        let fields = headers.map { ($0.0.lowercased(), $0.1) }
        for parameter in operation.parameters {
            let values: [String]
            switch parameter.location {
            case .path: values = pathParameters[parameter.name].map { [$0] } ?? []
            case .query: values = queryItems.filter { $0.0 == parameter.name }.map(\.1)
            case .header: values = fields.filter { $0.0 == parameter.name.lowercased() }.map(\.1)
            case .cookie: continue
            }
            let place = "\(parameter.location.rawValue):\(parameter.name)"
            if values.isEmpty {
                if parameter.required {
                    check.violations.append(
                        Violation(
                            pointer: place, keyword: "required",
                            expected: "\(parameter.location.rawValue) parameter \(parameter.name)", found: "absent",
                            schema: ""))
                }
                continue
            }
            guard let schema = parameter.schema else { continue }
            let text: String
            if parameter.type == "array" {
                let items =
                    parameter.explode && parameter.location == .query
                    ? values
                    : values.joined(separator: ",").split(
                        separator: parameter.style == "pipeDelimited"
                            ? "|" : (parameter.style == "spaceDelimited" ? " " : ","), omittingEmptySubsequences: false
                    ).map(String.init)
                text =
                    "["
                    + items.map { Self.json($0, type: parameter.itemType, itemType: nil, explode: false) }.joined(
                        separator: ",") + "]"
            } else {
                text = Self.json(values[0], type: parameter.type, itemType: nil, explode: false)
            }
            for violation in schema.validate(Array(text.utf8), direction: .request).violations {
                check.violations.append(Self.relocate(violation, to: place))
            }
        }
        if let body = operation.requestBody {
            if hasBody {
                let contentType = fields.first { $0.0 == "content-type" }?.1
                check.bodySchema = Self.mediaSchema(
                    body, contentType: contentType, into: &check, expected: operation.name)
            } else if body.required {
                check.violations.append(
                    Violation(pointer: "", keyword: "required", expected: "a request body", found: "none", schema: ""))
            }
        }
        return check
    }

    /// The operation a request names, noted in `check`; `nil` (and an `undocumented-operation`)
    /// when the document has none.
    private func operation(method: String, path: String, into check: inout HeadCheck) -> (Operation, [String: String])?
    {
        switch match(method: method, path: path) {
        case .operation(let found, let parameters):
            check.operation = found.name
            check.operationId = found.id
            check.template = found.template
            return (found, parameters)
        case .methodNotDocumented(let template):
            check.undocumented.append(
                Self.violation("undocumented-operation", "a documented method for \(template)", method.uppercased()))
        case .pathNotDocumented, .outsideBasePath:
            check.undocumented.append(
                Self.violation(
                    "undocumented-operation", "a path the document describes", "\(method.uppercased()) \(path)"))
        }
        return nil
    }

    private static func mediaSchema(_ body: Body, contentType: String?, into check: inout HeadCheck, expected: String)
        -> SchemaValidator?
    {
        guard !body.content.isEmpty else { return nil }
        let media =
            (contentType ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: " \t").lowercased() } ?? ""
        let slash = media.firstIndex(of: "/")
        let type = slash.map { String(media[..<$0]) } ?? media
        func bare(_ range: String) -> String {
            range.split(separator: ";").first.map { $0.trimmingCharacters(in: " \t").lowercased() } ?? ""
        }
        let entry =
            body.content.first { bare($0.range) == media } ?? body.content.first { bare($0.range) == type + "/*" }
            ?? body.content.first { bare($0.range) == "*/*" }
        guard let entry else {
            check.undocumented.append(
                violation(
                    "undocumented-content-type",
                    "one of \(body.content.map(\.range).joined(separator: ", ")) for \(expected)",
                    contentType ?? "no Content-Type"))
            return nil
        }
        guard MediaRange.isJSON(media) else { return nil }
        return entry.schema
    }

    static func violation(_ keyword: String, _ expected: String, _ found: String) -> Violation {
        Violation(pointer: "", keyword: keyword, expected: expected, found: found, schema: "")
    }

    static func relocate(_ violation: Violation, to place: String) -> Violation {
        Violation(
            pointer: place + violation.pointer, keyword: violation.keyword, expected: violation.expected,
            found: violation.found, schema: violation.schema)
    }

    /// A parameter or header value as JSON of its declared type (`"12"` → `12` for an integer).
    static func json(_ value: String, type: String?, itemType: String?, explode: Bool) -> String {
        switch type {
        case "integer", "number":
            return Number(text: Array(value.utf8)) != nil && JSONGrammarPublic.isNumber(value)
                ? value : Value.string(value).json
        case "boolean":
            return value == "true" || value == "false" ? value : Value.string(value).json
        case "null":
            return value.isEmpty ? "null" : Value.string(value).json
        default:
            return Value.string(value).json
        }
    }

    static func queryItems(_ query: String?) -> [(String, String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                SchemaRegistry.percentDecode(text.replacingOccurrences(of: "+", with: " "))
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// Media types, as OpenAPI and Sluice read them.
public enum MediaRange {
    /// `application/json`, `application/problem+json`, `text/json`.
    public static func isJSON(_ media: String) -> Bool {
        // On the bytes: this runs for every response of a rule with a contract.
        var media = media
        return media.withUTF8 { bytes -> Bool in
            var start = 0
            var end = bytes.count
            if let semicolon = bytes.firstIndex(of: 0x3B) { end = semicolon }
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            func equals(_ word: StaticString, at offset: Int) -> Bool {
                let count = word.utf8CodeUnitCount
                guard offset >= start, offset + count <= end else { return false }
                for index in 0..<count where bytes[offset + index] | 0x20 != word.utf8Start[index] | 0x20 {
                    return false
                }
                return true
            }
            let length = end - start
            return (length == 16 && equals("application/json", at: start))
                || (length == 9 && equals("text/json", at: start))
                || (length > 5 && equals("+json", at: end - 5))
        }
    }
}

enum JSONGrammarPublic {
    static func isNumber(_ text: String) -> Bool { JSONGrammar.isNumber(Array(text.utf8)) }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }

    func replacingOccurrences(of target: String, with replacement: String) -> String {
        String(self).replacingOccurrences(target, replacement)
    }
}

extension OpenAPIContract {
    /// The operation with this `operationId`.
    public func operation(id: String) -> Operation? { operations.first { $0.id == id } }

    /// The JSON body schema of an operation's response for `status` (exact, `2XX`, `default`).
    public func responseSchema(of operation: Operation, status: Int) -> SchemaValidator? {
        let code = String(status)
        let range = String(code.prefix(1)) + "XX"
        let response =
            operation.responses.first(where: { $0.key == code })?.response
            ?? operation.responses.first(where: { $0.key.uppercased() == range })?.response
            ?? operation.responses.first(where: { $0.key == "default" })?.response
        return response?.body?.content.first { MediaRange.isJSON($0.range) }?.schema
    }

    /// The JSON schema of an operation's request body.
    public func requestSchema(of operation: Operation) -> SchemaValidator? {
        operation.requestBody?.content.first { MediaRange.isJSON($0.range) }?.schema
    }
}

extension Value {
    /// Parses JSON text (strict RFC 8259; nesting up to 512).
    public static func parse(_ bytes: [UInt8]) throws(ContractError) -> Value {
        var reader = JSONReader(bytes: bytes)
        do throws(JSONReader.Failure) {
            return try reader.document()
        } catch {
            throw ContractError(file: "-", line: error.line, pointer: nil, message: error.message)
        }
    }

    /// Pretty JSON text (two spaces), member order kept.
    public func pretty(indent: String = "") -> String {
        switch self {
        case .array(let items) where !items.isEmpty:
            let inner = indent + "  "
            return "[\n" + items.map { inner + $0.pretty(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members) where !members.isEmpty:
            let inner = indent + "  "
            return "{\n"
                + members.map { inner + Value.string($0.0).json + ": " + $0.1.pretty(indent: inner) }.joined(
                    separator: ",\n") + "\n" + indent + "}"
        default: return json
        }
    }
}
