// What a request or a response head is checked for, and which schema its body gets.

extension OpenAPIContract {
    /// The checks of a response's head: operation, status, media type, headers.
    public func checkResponse(
        method: String, path: String, status: Int, headers: [(String, String)]
    ) -> HeadCheck {
        var check = HeadCheck()
        guard let (operation, _) = operation(method: method, path: path, into: &check) else { return check }
        guard let response = operation.response(for: status) else {
            let code = String(status)
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
                        Self.json(values.joined(separator: ","), type: header.type).utf8)
                )
                for violation in verdict.violations {
                    check.violations.append(Self.relocate(violation, to: "header:\(header.name)"))
                }
            }
        }
        let contentType = fields.first { $0.0 == "content-type" }?.1
        if let body = response.body, status != 204, status != 304 {
            if method.uppercased() != "HEAD" {
                check.bodySchema = Self.mediaSchema(
                    body, contentType: contentType, into: &check, expected: operation.name)
            } else if contentType != nil {
                // A HEAD answer says what the GET would send (RFC 9110 §9.3.2): its media type is
                // checked, and there is no body to validate.
                _ = Self.mediaSchema(body, contentType: contentType, into: &check, expected: operation.name)
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
                    + items.map { Self.json($0, type: parameter.itemType) }.joined(
                        separator: ",") + "]"
            } else {
                text = Self.json(values[0], type: parameter.type)
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
        let media = MediaRange.bare(contentType ?? "")
        let type = media.firstIndex(of: "/").map { String(media[..<$0]) } ?? media
        let ranges = body.content.map { MediaRange.bare($0.range) }
        // A suffix range (`application/*+json`, common in real documents though not in RFC 9110)
        // takes the types with that suffix.
        let suffixRange = media.lastIndex(of: "+").map { type + "/*" + media[$0...] }
        let index =
            ranges.firstIndex(of: media) ?? suffixRange.flatMap { ranges.firstIndex(of: $0) }
            ?? ranges.firstIndex(of: type + "/*") ?? ranges.firstIndex(of: "*/*")
        let entry = index.map { body.content[$0] }
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

    static func queryItems(_ query: String?) -> [(String, String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                SchemaRegistry.percentDecode(String(text).replacingOccurrences("+", " "))
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
