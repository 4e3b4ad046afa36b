// A document's operations as the loader reads them: path items, their fixed and additional
// operations, and path templates.

extension OpenAPILoader {
    private static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    /// OAS 3.2 adds `query` (the QUERY method) to the path item's fixed fields.
    private var fixedMethods: [String] { reads32 ? Self.methods + ["query"] : Self.methods }

    mutating func operations(_ root: Value) throws(ContractError) -> [OpenAPIContract.Operation] {
        guard var pathsValue = root["paths"], pathsValue != .null else {
            if root["webhooks"] == nil && root["components"] == nil {
                throw ContractError(file: uri, line: 1, pointer: "", message: "the document has no paths")
            }
            return []
        }
        var pathsLocation = SchemaLocation(document: uri, pointer: "/paths")
        if pathsValue["$ref"] != nil {
            // Not allowed by OpenAPI (the Paths Object is not a Reference Object's target), but
            // split descriptions write it (Google Maps): followed, and said.
            warnings.append(warn("/paths/$ref", "paths is a $ref, which OpenAPI does not allow here; followed"))
            (pathsValue, pathsLocation) = try resolve(pathsValue, at: pathsLocation)
        }
        guard let paths = pathsValue.members else {
            throw warn(pathsLocation.pointer, "paths must be an object", file: pathsLocation.document)
        }
        var drafts: [Draft] = []
        // Each path item and operation on its own: a broken one is said, and the rest still read,
        // so that one load names every error (``errors``; the document loads only without any).
        for (template, rawItem) in paths where !template.hasPrefix("x-") {
            do throws(ContractError) {
                try readPathItem(template, rawItem, in: pathsLocation, into: &drafts)
            } catch {
                errors.append(error)
            }
        }
        return drafts.map {
            OpenAPIContract.Operation(
                id: $0.id, method: $0.method, template: $0.template, segments: $0.segments,
                parameters: $0.parameters.map(\.parameter), requestBody: $0.requestBody, responses: $0.responses,
                place: $0.place, bases: $0.bases)
        }
    }

    /// A path item's operations into `drafts`, each broken operation's error into ``errors``; an
    /// error of the item itself (its `$ref`, its shared parameters) is thrown.
    private mutating func readPathItem(
        _ template: String, _ rawItem: Value, in paths: SchemaLocation, into drafts: inout [Draft]
    ) throws(ContractError) {
        let itemLocation = SchemaLocation(
            document: paths.document, pointer: paths.pointer + "/" + Value.escape(template))
        guard template.hasPrefix("/") else {
            warnings.append(
                warn(itemLocation.pointer, "a path that does not start with / (ignored)", file: itemLocation.document))
            return
        }
        // A path with a query (`/responses?beta=true`; OpenAPI's paths hold none) is matched by
        // its path: a request's query is never part of what is matched.
        var matched = template
        if let query = template.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            matched = String(template[..<query])
            if !warnedPathQuery {
                warnedPathQuery = true
                warnings.append(
                    warn(
                        itemLocation.pointer,
                        "a path with a query or fragment (OpenAPI paths hold none) is matched by its path, after the same path without one: \(template) as \(matched) (said once)",
                        file: itemLocation.document))
            }
        }
        let (item, location) = try resolve(rawItem, at: itemLocation)
        let shared = try parameters(item["parameters"], at: location, pointer: location.pointer + "/parameters")
        let itemBases = Self.basePaths(of: item["servers"])
        // Each operation: the fixed fields' (method upper-cased), then (3.2) `additionalOperations`,
        // whose keys are the methods as sent (`COPY`; case-sensitive, RFC 9110 §9.1).
        var entries: [(method: String, value: Value, pointer: String)] = []
        for field in fixedMethods {
            if let value = item[field] { entries.append((field.uppercased(), value, location.pointer + "/" + field)) }
        }
        if reads32, let additional = item["additionalOperations"]?.members {
            let fixed = Set(fixedMethods.map { $0.uppercased() })
            for (method, value) in additional where !method.hasPrefix("x-") {
                let pointer = location.pointer + "/additionalOperations/" + Value.escape(method)
                guard Self.isToken(method), !fixed.contains(method.uppercased()) else {
                    warnings.append(
                        warn(
                            pointer,
                            Self.isToken(method)
                                ? "\(method) belongs in the path item's \(method.lowercased()) field, not additionalOperations (ignored)"
                                : "\"\(method)\" is not an HTTP method name (ignored)",
                            file: location.document))
                    continue
                }
                entries.append((method, value, pointer))
            }
        }
        for (method, operationValue, operationPointer) in entries {
            do throws(ContractError) {
                // An operation named by `$ref` (`get: {$ref: "operations/list.yml"}`): OpenAPI 3.0
                // lists `$ref` for path items only, but large descriptions are laid out this way and
                // Redocly, Prism and openapi-core resolve it, so Sluice does too.
                let (rawOperation, operationLocation) = try resolve(
                    operationValue, at: SchemaLocation(document: location.document, pointer: operationPointer))
                var own = try parameters(
                    rawOperation["parameters"], at: operationLocation,
                    pointer: operationLocation.pointer + "/parameters")
                // Operation parameters override path-item ones with the same name and place.
                for parameter in shared
                where !own.contains(where: { $0.name == parameter.name && $0.location == parameter.location }) {
                    own.append(parameter)
                }
                // OAS 3.2 §4.8.12.2: one querystring parameter, and never beside query ones.
                let wholeQueries = own.filter { $0.location == .querystring }.count
                if wholeQueries > 1 || (wholeQueries == 1 && own.contains { $0.location == .query }) {
                    warnings.append(
                        warn(
                            operationLocation.pointer + "/parameters",
                            wholeQueries > 1
                                ? "more than one querystring parameter: each is checked against the whole query"
                                : "a querystring parameter beside query parameters: both are checked",
                            file: operationLocation.document))
                }
                let requestBody =
                    swagger2
                    ? try swagger2RequestBody(
                        [
                            (
                                rawOperation["parameters"], operationLocation,
                                operationLocation.pointer + "/parameters"
                            ),
                            (item["parameters"], location, location.pointer + "/parameters"),
                        ],
                        consumes: Self.swagger2MediaTypes(rawOperation, root: documentRoot, key: "consumes"))
                    : try body(rawOperation["requestBody"], at: operationLocation, name: "requestBody")
                let produces = Self.swagger2MediaTypes(rawOperation, root: documentRoot, key: "produces")
                var responses: [(String, OpenAPIContract.Response)] = []
                let (responsesValue, responsesLocation) = try resolve(
                    rawOperation["responses"] ?? .null,
                    at: SchemaLocation(
                        document: operationLocation.document, pointer: operationLocation.pointer + "/responses"))
                if let rawResponses = responsesValue.members {
                    for (key, rawResponse) in rawResponses {
                        let responseLocation = SchemaLocation(
                            document: responsesLocation.document,
                            pointer: responsesLocation.pointer + "/" + Value.escape(key))
                        let (response, resolved) = try resolve(rawResponse, at: responseLocation)
                        responses.append(
                            (
                                key,
                                swagger2
                                    ? try swagger2Response(response, at: resolved, produces: produces)
                                    : try self.response(response, at: resolved)
                            ))
                    }
                } else {
                    warnings.append(
                        warn(
                            operationLocation.pointer, "an operation without responses: nothing of it is checked",
                            file: operationLocation.document))
                }
                drafts.append(
                    Draft(
                        id: rawOperation["operationId"]?.string, method: method, template: template,
                        segments: Self.segments(
                            matched, spanning: Set(own.filter { $0.parameter.spansSegments }.map(\.name))),
                        parameters: own, requestBody: requestBody,
                        responses: responses, place: place(operationLocation),
                        bases: Self.basePaths(of: rawOperation["servers"]) ?? itemBases))
            } catch {
                errors.append(error)
            }
        }
    }

    /// An HTTP method name: a token (RFC 9110 §9.1, §5.6.2).
    static func isToken(_ text: String) -> Bool { !text.isEmpty && text.utf8.allSatisfy(Format.isTokenCharacter) }

    private struct Draft {
        var id: String?
        var method: String
        var template: String
        var segments: [OpenAPIContract.Segment]
        var parameters: [ParameterDraft]
        var requestBody: OpenAPIContract.Body?
        var responses: [(String, OpenAPIContract.Response)]
        var place: SourcePlace
        var bases: [String]?
    }

    struct ParameterDraft {
        var parameter: OpenAPIContract.Parameter
        var schemaKey: String?
        var name: String { parameter.name }
        var location: OpenAPIContract.Parameter.Location { parameter.location }
    }

    /// - Parameter spanning: path parameters whose value may span segments; the first that is a
    ///   whole segment of the template does.
    static func segments(_ template: String, spanning: Set<String> = []) -> [OpenAPIContract.Segment] {
        var spanned = false
        return template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            guard let open = segment.firstIndex(of: "{"), let close = segment.firstIndex(of: "}"), open < close else {
                return .literal(String(segment))
            }
            let after = segment[segment.index(after: close)...]
            if after.contains("{") {
                // Several expressions: text and parameters in turn.
                var pieces: [OpenAPIContract.Piece] = []
                var rest = segment[...]
                while let start = rest.firstIndex(of: "{"), let end = rest[start...].firstIndex(of: "}") {
                    if start > rest.startIndex { pieces.append(.text(String(rest[..<start]))) }
                    pieces.append(.parameter(String(rest[rest.index(after: start)..<end])))
                    rest = rest[rest.index(after: end)...]
                }
                if !rest.isEmpty { pieces.append(.text(String(rest))) }
                return .pattern(pieces)
            }
            let name = String(segment[segment.index(after: open)..<close])
            if !spanned, spanning.contains(name), open == segment.startIndex,
                segment.index(after: close) == segment.endIndex
            {
                spanned = true
                return .spanning(name: name)
            }
            return .parameter(
                name: name, prefix: String(segment[..<open]), suffix: String(segment[segment.index(after: close)...]))
        }
    }
}
