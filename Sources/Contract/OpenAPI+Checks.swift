// What a request or a response head is checked for, and which schema its body gets.

extension OpenAPIContract {
    /// The checks of a response's head: operation, status, media type, headers.
    public func checkResponse(
        method: String, path: String, status: Int, headers: [(String, String)]
    ) -> HeadCheck {
        var check = HeadCheck()
        guard let (operation, _) = operation(method: method, path: path, into: &check) else { return check }
        // An operation that lists no responses (3.1 allows it) says nothing about them: lint
        // says so, and no status is undocumented.
        if operation.responses.isEmpty { return check }
        // A 304 answers a conditional request (RFC 9110 §15.4.5) with the representation the
        // client holds: few descriptions list it, and one they do not is not a broken promise
        // (the client's cache, not the API, asked for it). Checked when listed as 304 or 3XX.
        if status == 304, !operation.responses.contains(where: { $0.key == "304" || $0.key.uppercased() == "3XX" }) {
            return check
        }
        guard let response = operation.response(for: status) else {
            let code = String(status)
            let documented = operation.responses.map(\.key).joined(separator: ", ")
            // Located at the operation's responses (a report's file and line point there).
            check.undocumented.append(
                Self.violation(
                    "undocumented-status", "one of \(documented) for \(operation.name)", code,
                    at: operation.place.shown.isEmpty ? "" : operation.place.shown + "/responses"))
            return check
        }
        let fields = headers.map { ($0.0.lowercased(), $0.1) }
        for header in response.headers {
            let name = header.name.lowercased()
            guard name != "content-type" else { continue }
            let values = fields.filter { $0.0 == name }.map(\.1)
            if values.isEmpty {
                if header.required {
                    // Located at the header's entry in the response (the line a review marks).
                    let place = response.place.shown
                    check.violations.append(
                        Violation(
                            pointer: "header:\(header.name)", keyword: "required", expected: "header \(header.name)",
                            found: "absent",
                            schema: place.isEmpty ? "" : place + "/headers/" + Value.escape(header.name)))
                }
                continue
            }
            if let schema = header.schema {
                guard let text = Self.text(of: header, values: values) else { continue }
                let verdict = schema.validate(Array(text.utf8))
                for violation in verdict.violations {
                    check.violations.append(Self.relocate(violation, to: "header:\(header.name)"))
                }
            }
        }
        let contentType = fields.first { $0.0 == "content-type" }?.1
        // An empty body has no media type to check: said as what it is, not as a type missing.
        let empty = contentType == nil && fields.contains { $0.0 == "content-length" && $0.1 == "0" }
        if let body = response.body, status != 204, status != 304 {
            let place = response.place.shown.isEmpty ? "" : response.place.shown + "/content"
            if method.uppercased() != "HEAD" {
                check.bodySchema = Self.mediaSchema(
                    body, contentType: contentType, into: &check, expected: operation.name, at: place, empty: empty)
                if check.bodySchema != nil, let contentType, Self.documentsWatch(body, for: contentType) {
                    Self.readAsWatch(&check, path: path, template: operation.template)
                }
            } else if contentType != nil {
                // A HEAD answer says what the GET would send (RFC 9110 §9.3.2): its media type is
                // checked, and there is no body to validate.
                _ = Self.mediaSchema(body, contentType: contentType, into: &check, expected: operation.name, at: place)
            }
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
            var values: [String]
            switch parameter.location {
            case .path: values = pathParameters[parameter.name].map { [$0] } ?? []
            case .query
            where parameter.type == "object" && parameter.style == "form" && parameter.explode
                && !parameter.jsonContent:
                // Each property is an item of its own (`?lat=1&lng=2`), the parameter's name nowhere.
                values = queryItems.filter { parameter.propertyTypes[$0.0] != nil }.map { $0.0 + "=" + $0.1 }
            case .query where parameter.style == "deepObject":
                // `?point[lat]=1`: present, not checked (yet).
                values = queryItems.filter { $0.0.hasPrefix(parameter.name + "[") }.map(\.1)
            case .query: values = queryItems.filter { $0.0 == parameter.name }.map(\.1)
            case .querystring: values = query.map { $0.isEmpty ? [] : [$0] } ?? []
            case .header: values = fields.filter { $0.0 == parameter.name.lowercased() }.map(\.1)
            case .cookie: continue
            }
            let place = "\(parameter.location.rawValue):\(parameter.name)"
            if parameter.allowsEmptyValue, !values.isEmpty, values.allSatisfy(\.isEmpty) { continue }
            if values.isEmpty {
                if parameter.required {
                    check.violations.append(
                        Violation(
                            pointer: place, keyword: "required",
                            expected: "\(parameter.location.rawValue) parameter \(parameter.name)", found: "absent",
                            schema: parameter.place))
                }
                continue
            }
            guard let schema = parameter.schema, let text = Self.text(of: parameter, values: values) else { continue }
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
                Self.violation("undocumented-operation", "a documented method for \(template)", "\(method) \(path)"))
        case .pathNotDocumented, .outsideBasePath:
            check.undocumented.append(
                Self.violation(
                    "undocumented-operation", "a path the document describes", "\(method) \(path)"))
        }
        return nil
    }

    /// The schema of a JSON body (the result) or, for a sequential media type of an OAS 3.2
    /// document, its item and sequence schemas (`check.sequence`); an undocumented media type noted.
    private static func mediaSchema(
        _ body: Body, contentType: String?, into check: inout HeadCheck, expected: String, at place: String = "",
        empty: Bool = false
    ) -> SchemaValidator? {
        guard !body.content.isEmpty else { return nil }
        let media = MediaRange.bare(contentType ?? "")
        let entry = MediaRange.pick(media, from: body.content.map(\.range)).map { body.content[$0] }
        guard let entry else {
            check.undocumented.append(
                violation(
                    "undocumented-content-type",
                    "one of \(body.content.map(\.range).joined(separator: ", ")) for \(expected)",
                    contentType ?? (empty ? "an empty body (Content-Length: 0, no Content-Type)" : "no Content-Type"),
                    at: place))
            return nil
        }
        // The message's own type says how its items are laid out, when the document's entry is
        // that sequential type itself (a range such as `text/*` has no items: not validated).
        if entry.framing != nil, let framing = BodyFraming(media: media), entry.schema != nil || entry.itemSchema != nil
        {
            check.sequence = SequenceSchemas(framing: framing, whole: entry.schema, item: entry.itemSchema)
            return nil
        }
        guard MediaRange.isJSON(media) else { return nil }
        return entry.schema
    }

    /// Whether the documented types include the message's with Kubernetes' `stream=watch`
    /// parameter (`application/json;stream=watch`): the operation may answer a watch, a stream of
    /// JSON values, one per line, in the plain type.
    static func documentsWatch(_ body: Body, for contentType: String) -> Bool {
        let bare = MediaRange.bare(contentType)
        return body.content.contains { media in
            MediaRange.bare(media.range) == bare
                && media.range.lowercased().split(separator: ";").dropFirst().contains {
                    $0.trimmedOWS == "stream=watch"
                }
        }
    }

    /// A watch answer: asked for with `?watch=true` on a list operation, its events are not the
    /// list the schema describes (not validated, said so); from a watch operation (`/watch/` in
    /// its path, whose schema is the event's), each line is checked against the schema.
    static func readAsWatch(_ check: inout HeadCheck, path: String, template: String) {
        let query = path.firstIndex(of: "?").map { String(path[path.index(after: $0)...]) }
        let asked = queryItems(query).contains { item in
            item.0 == "watch" && ["true", "1", "t", "True", "TRUE"].contains(SchemaRegistry.percentDecode(item.1))
        }
        if template.contains("/watch/") {
            check.sequence = SequenceSchemas(framing: .lines, whole: nil, item: check.bodySchema)
            check.bodySchema = nil
        } else if asked {
            check.bodySchema = nil
            check.bodyNotValidated =
                "a watch stream (?watch= on an operation documented with stream=watch): its events are not the schema's list"
        }
    }

    static func violation(_ keyword: String, _ expected: String, _ found: String, at place: String = "") -> Violation {
        Violation(pointer: "", keyword: keyword, expected: expected, found: found, schema: place)
    }

    static func relocate(_ violation: Violation, to place: String) -> Violation {
        Violation(
            pointer: place + violation.pointer, keyword: violation.keyword, expected: violation.expected,
            found: violation.found, schema: violation.schema)
    }

    /// A parameter's or header's values (as many lines or items as were sent) as the JSON its
    /// schema is applied to (OAS §4.7.12 Style Values): JSON text itself for a `content`
    /// parameter; an array's items split as its style says; an object's members, as `k,v,k,v`
    /// (not exploded), `k=v,k=v` (`simple` exploded) or one `k=v` item each (`form` exploded);
    /// else the first value, typed as the schema says. `nil` for what is not checked (yet):
    /// `deepObject`, `matrix` and `label` values.
    /// `text` cut at each occurrence of any of `delimiters` (empty pieces kept).
    static func splitting(_ text: String, at delimiters: [String]) -> [String] {
        let bytes = Array(text.utf8)
        let marks = delimiters.map { Array($0.utf8) }
        var pieces: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            if let mark = marks.first(where: { bytes[index...].starts(with: $0) }) {
                pieces.append(String(decoding: bytes[start..<index], as: UTF8.self))
                index += mark.count
                start = index
            } else {
                index += 1
            }
        }
        pieces.append(String(decoding: bytes[start...], as: UTF8.self))
        return pieces
    }

    /// The delimiters of a style that has its own (§4.7.12.4): sent encoded (`blue%20black`,
    /// `blue|black` or `blue%7Cblack`), a space also as `+`; Swagger 2.0's `tsv` splits at tabs.
    static func delimiters(ofStyle style: String) -> [String]? {
        switch style {
        case "spaceDelimited": ["%20", "+", " "]
        case "pipeDelimited": ["%7C", "%7c", "|"]
        case "tabDelimited": ["%09", "\t"]
        default: nil
        }
    }

    static func text(of parameter: Parameter, values: [String]) -> String? {
        if parameter.location == .querystring { return queryStringText(of: parameter, query: values[0]) }
        guard !["deepObject", "matrix", "label"].contains(parameter.style) else { return nil }
        // Each piece once split: a query's percent-decoded (a `%2C` is data, never a delimiter:
        // RFC 6570, OAS 3.1.1 §4.8.12.4), a header's without the OWS around list elements (RFC
        // 9110 §5.6.1); path values came decoded.
        let piece: (Substring) -> String
        switch parameter.location {
        case .query, .querystring: piece = { SchemaRegistry.percentDecode(String($0).replacingOccurrences("+", " ")) }
        case .header: piece = { $0.trimmedOWS }
        case .path, .cookie: piece = { String($0) }
        }
        if parameter.jsonContent { return piece(values[0][...]) }
        switch parameter.type {
        case "array":
            let items: [String]
            if parameter.explode && parameter.location == .query {
                items = values.map { piece($0[...]) }
            } else if let delimiters = Self.delimiters(ofStyle: parameter.style) {
                items = splitting(values.joined(separator: ","), at: delimiters).map { piece($0[...]) }
            } else {
                items = values.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false).map(piece)
            }
            if let inner = parameter.innerDelimiters {
                // A nested array (Swagger 2.0): each item split again.
                return "["
                    + items.map { item in
                        "["
                            + splitting(item, at: inner).map { json($0, type: parameter.innerItemType) }
                            .joined(separator: ",") + "]"
                    }.joined(separator: ",") + "]"
            }
            return "[" + items.map { json($0, type: parameter.itemType) }.joined(separator: ",") + "]"
        case "object" where parameter.style == "form" || parameter.style == "simple":
            var members: [(String, String)] = []
            if parameter.explode {
                let items =
                    parameter.location == .query
                    ? values.map { $0[...] } : values.joined(separator: ",").split(separator: ",")
                for item in items {
                    let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    members.append((piece(pair[0]), pair.count > 1 ? piece(pair[1]) : ""))
                }
            } else {
                let parts = values.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count % 2 == 0 else { return Value.string(values.joined(separator: ",")).json }
                for index in stride(from: 0, to: parts.count, by: 2) {
                    members.append((piece(parts[index]), piece(parts[index + 1])))
                }
            }
            return "{"
                + members.map { Value.string($0.0).json + ":" + json($0.1, type: parameter.propertyTypes[$0.0]) }
                .joined(separator: ",") + "}"
        default:
            return json(
                parameter.location == .header ? values.joined(separator: ",") : piece(values[0][...]),
                type: parameter.type)
        }
    }

    /// A `querystring` parameter's query as the JSON its schema is applied to: form pairs as an
    /// object (`+` a space; a name repeated, or an array property, as an array; values typed as
    /// the properties say), JSON text decoded, anything else the decoded text as a string.
    static func queryStringText(of parameter: Parameter, query: String) -> String? {
        switch parameter.queryForm {
        case nil: return nil
        case .json: return SchemaRegistry.percentDecode(query)
        case .text: return Value.string(SchemaRegistry.percentDecode(query)).json
        case .form:
            var names: [String] = []
            var values: [String: [String]] = [:]
            for (name, raw) in queryItems(query) {
                if values[name] == nil { names.append(name) }
                values[name, default: []].append(SchemaRegistry.percentDecode(raw.replacingOccurrences("+", " ")))
            }
            let members = names.map { name -> String in
                let found = values[name]!
                let type = parameter.propertyTypes[name]
                let value: String
                // A name sent more than once is an array, whatever its property says (a scalar
                // property then fails: `limit=1&limit=abc` is not one limit).
                if type == "array" || found.count > 1 {
                    let itemType = parameter.propertyItemTypes[name]
                    value = "[" + found.map { json($0, type: itemType) }.joined(separator: ",") + "]"
                } else {
                    value = json(found[0], type: type)
                }
                return Value.string(name).json + ":" + value
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    /// A parameter or header value as JSON of its declared type (`"12"` → `12` for an integer).
    static func json(_ value: String, type: String?) -> String {
        switch type {
        case "integer", "number":
            return JSONGrammar.isNumber(Array(value.utf8)) ? value : Value.string(value).json
        case "boolean":
            return value == "true" || value == "false" ? value : Value.string(value).json
        case "null":
            return value.isEmpty ? "null" : Value.string(value).json
        default:
            return Value.string(value).json
        }
    }

    /// The query's items: names decoded, values as sent (decoded once split, by
    /// ``text(of:values:)``: a percent-encoded delimiter is data).
    static func queryItems(_ query: String?) -> [(String, String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = SchemaRegistry.percentDecode(String(parts[0]).replacingOccurrences("+", " "))
            return (name, parts.count > 1 ? String(parts[1]) : "")
        }
    }
}

extension Substring {
    /// Without HTTP's optional whitespace (spaces and tabs, RFC 9110 §5.6.3) at its ends.
    var trimmedOWS: String {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
