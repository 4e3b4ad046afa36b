// Swagger 2.0 (OpenAPI 2.0) documents, read into the same operations as 3.x ones: `basePath`,
// `definitions`, a body parameter as the request body, `produces`/`consumes` as media types, a
// response's `schema`, and parameters and headers that are their own schemas (`type`, `format`,
// `items`, `enum`… on the parameter) with `collectionFormat` as their style.

extension OpenAPILoader {
    /// The members of a 2.0 parameter or header that are not schema keywords.
    private static let parameterFields: Set<String> = [
        "name", "in", "required", "description", "allowEmptyValue", "collectionFormat", "schema",
    ]

    /// A 2.0 parameter (not `in: body`) or header: the parameter is its own schema. Its schema
    /// members are compiled as a document of their own, named after where the parameter is
    /// (`…/api.yaml#/paths/~1pets/get/parameters/0`).
    mutating func swagger2Schema(of value: Value, at location: SchemaLocation) throws(ContractError) -> (
        SchemaValidator, Value, SchemaLocation
    )? {
        guard let members = value.members else { return nil }
        let kept = members.filter {
            !Self.parameterFields.contains($0.0) && !$0.0.hasPrefix("x-") || $0.0 == "x-nullable"
        }
        guard kept.contains(where: { $0.0 == "type" || $0.0 == "enum" }) else { return nil }
        // `type: file` (formData uploads) is no JSON type.
        if value["type"]?.string == "file" { return nil }
        let root = Value.object(kept)
        let uri = location.document + "#" + location.pointer
        if registry.documents[uri] == nil {
            var lines: [String: Int] = [:]
            let prefix = location.pointer
            for (pointer, line) in registry.documents[location.document]?.lines ?? [:] where pointer.hasPrefix(prefix) {
                lines[String(pointer.dropFirst(prefix.count))] = line
            }
            registry.add(SourceDocument(uri: uri, root: root, lines: lines))
        }
        let schemaLocation = SchemaLocation(document: uri, pointer: "")
        guard let validator = try schema(at: schemaLocation) else { return nil }
        return (validator, root, schemaLocation)
    }

    /// 2.0's `collectionFormat` as the 3.x style and explode it stands for.
    static func swagger2Style(_ format: String?, location: OpenAPIContract.Parameter.Location) -> (String, Bool) {
        switch format {
        case "ssv": return ("spaceDelimited", false)
        case "tsv": return ("tabDelimited", false)
        case "pipes": return ("pipeDelimited", false)
        case "multi": return ("form", true)
        default: return (location == .query || location == .cookie ? "form" : "simple", false)
        }
    }

    /// The operation's `produces` (else the document's): its responses' media types; `*/*` when
    /// neither says (a JSON body is then validated, and no type is undocumented).
    static func swagger2MediaTypes(_ operation: Value, root: Value?, key: String) -> [String] {
        let listed = (operation[key] ?? root?[key])?.items?.compactMap(\.string) ?? []
        return listed.isEmpty ? ["*/*"] : listed
    }

    /// A 2.0 response: its `schema` for each type the operation produces, its headers.
    mutating func swagger2Response(_ value: Value, at location: SchemaLocation, produces: [String])
        throws(ContractError) -> OpenAPIContract.Response
    {
        var headers: [OpenAPIContract.Parameter] = []
        for (name, raw) in value["headers"]?.members ?? [] {
            let headerLocation = SchemaLocation(
                document: location.document, pointer: location.pointer + "/headers/" + Value.escape(name))
            let (header, resolved) = try resolve(raw, at: headerLocation)
            // 2.0 headers have no `required`: a documented header is described, not promised.
            headers.append(
                try parameter(header, resolved: resolved, name: name, location: .header, required: false).0)
        }
        var body: OpenAPIContract.Body?
        if value["schema"] != nil {
            let file = (try? resolve(value["schema"]!, at: location))?.0["type"]?.string == "file"
            let validator =
                file
                ? nil
                : try schema(at: SchemaLocation(document: location.document, pointer: location.pointer + "/schema"))
            body = OpenAPIContract.Body(
                required: false, content: produces.map { OpenAPIContract.Media(range: $0, schema: validator) })
        }
        return OpenAPIContract.Response(headers: headers, body: body, place: place(location))
    }

    /// The request body of a 2.0 operation: its `in: body` parameter (the operation's, else its
    /// path item's) for each type it consumes, or its `formData` parameters' form (not validated).
    mutating func swagger2RequestBody(
        _ lists: [(Value?, SchemaLocation, String)], consumes: [String]
    ) throws(ContractError) -> OpenAPIContract.Body? {
        // The operation's list comes first: its body parameter wins over the path item's.
        for (value, location, pointer) in lists {
            for (index, raw) in (value?.items ?? []).enumerated() {
                let (parameter, resolved) = try resolve(
                    raw, at: SchemaLocation(document: location.document, pointer: pointer + "/\(index)"))
                guard parameter["in"]?.string == "body", parameter["schema"] != nil else { continue }
                let validator = try schema(
                    at: SchemaLocation(document: resolved.document, pointer: resolved.pointer + "/schema"))
                return OpenAPIContract.Body(
                    required: parameter["required"]?.bool == true,
                    content: consumes.map { OpenAPIContract.Media(range: $0, schema: validator) })
            }
        }
        var form: [Value] = []
        for (value, location, pointer) in lists {
            for (index, raw) in (value?.items ?? []).enumerated() {
                let (parameter, _) = try resolve(
                    raw, at: SchemaLocation(document: location.document, pointer: pointer + "/\(index)"))
                if parameter["in"]?.string == "formData" { form.append(parameter) }
            }
        }
        guard !form.isEmpty else { return nil }
        let formTypes = consumes.filter {
            ["application/x-www-form-urlencoded", "multipart/form-data"].contains(MediaRange.bare($0))
        }
        let types =
            !formTypes.isEmpty
            ? formTypes
            : [
                form.contains { $0["type"]?.string == "file" }
                    ? "multipart/form-data" : "application/x-www-form-urlencoded"
            ]
        return OpenAPIContract.Body(
            required: form.contains { $0["required"]?.bool == true },
            content: types.map { OpenAPIContract.Media(range: $0) })
    }
}
