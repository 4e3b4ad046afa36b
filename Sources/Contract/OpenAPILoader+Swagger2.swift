// Swagger 2.0 (OpenAPI 2.0) documents, read into the same operations as 3.x ones: `basePath`,
// `definitions`, a body parameter as the request body, `produces`/`consumes` as media types, a
// response's `schema`, and parameters and headers that are their own schemas (`type`, `format`,
// `items`, `enum`… on the parameter) with `collectionFormat` as their style.

extension OpenAPILoader {
    /// A 2.0 parameter (not `in: body`) or header: the parameter is its own schema, compiled
    /// where it is (less its parameter fields: ``SchemaCompiler/parameterFields``). `nil` for one
    /// without a type (or `type: file`).
    mutating func swagger2Schema(of value: Value, at location: SchemaLocation) throws(ContractError) -> (
        SchemaValidator, Value, SchemaLocation
    )? {
        guard let members = value.members, value["type"] != nil || value["enum"] != nil,
            value["type"]?.string != "file"
        else { return nil }
        compiler.parameterObjects.insert(location.key)
        guard let validator = try schema(at: location) else { return nil }
        return (validator, .object(members.filter { !SchemaCompiler.parameterFields.contains($0.0) }), location)
    }

    /// The delimiters of a nested array's `collectionFormat` (`csv` when absent; `multi` is for
    /// parameters only: read as `csv`).
    static func delimiters(ofCollectionFormat format: String?) -> [String] {
        OpenAPIContract.delimiters(ofStyle: swagger2Style(format, location: .query).0) ?? [","]
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
                required: false,
                content: produces.map { range in
                    var media = OpenAPIContract.Media(range: range, schema: validator)
                    media.isFile = file
                    // 2.0's response `examples`: one value per media type.
                    if let example = value["examples"]?[range] {
                        let pointer = location.pointer + "/examples/" + Value.escape(range)
                        media.examples = [
                            OpenAPIContract.Example(
                                name: range, value: example,
                                place: place(SchemaLocation(document: location.document, pointer: pointer)))
                        ]
                    }
                    return media
                })
        }
        return OpenAPIContract.Response(headers: headers, body: body, place: place(location))
    }

    /// The request body of a 2.0 operation: its `in: body` parameter (the operation's, else its
    /// path item's) for each type it consumes, or its `formData` parameters' form (not validated).
    mutating func swagger2RequestBody(
        _ lists: [(Value?, SchemaLocation, String)], consumes: [String]
    ) throws(ContractError) -> OpenAPIContract.Body? {
        // One body parameter, and never beside form parameters (Swagger 2.0 §4.3.5), among the
        // operation's parameters and those of its path item it does not override (same name and
        // place): said where the operation's are written.
        var own: Set<String> = []
        var kinds: [(kind: String, inherited: Bool)] = []
        for (listIndex, (value, location, pointer)) in lists.enumerated() {
            for (index, raw) in (value?.items ?? []).enumerated() {
                let place = SchemaLocation(document: location.document, pointer: pointer + "/\(index)")
                guard let parameter = (try? resolve(raw, at: place))?.0, let kind = parameter["in"]?.string else {
                    continue
                }
                let key = kind + " " + (parameter["name"]?.string ?? "")
                // A path item's parameter the operation overrides (same name and place) is not its.
                if listIndex == 0 { own.insert(key) } else if own.contains(key) { continue }
                if kind == "body" || kind == "formData" { kinds.append((kind, listIndex > 0)) }
            }
        }
        if let (_, location, pointer) = lists.first {
            let bodies = kinds.filter { $0.kind == "body" }
            let conflicting = bodies.count > 1 ? bodies : kinds.contains { $0.kind == "formData" } ? kinds : []
            let from = conflicting.contains { $0.inherited } ? " (with the path item's)" : ""
            if bodies.count > 1 {
                warnings.append(
                    warn(
                        pointer, "more than one body parameter\(from): the first is the request body",
                        file: location.document))
            }
            if !bodies.isEmpty, kinds.contains(where: { $0.kind == "formData" }) {
                warnings.append(
                    warn(
                        pointer, "a body parameter beside formData parameters\(from): the body parameter is read",
                        file: location.document))
            }
        }
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

    /// The base path of a 2.0 document: its `basePath`, after the path of AutoRest's
    /// `x-ms-parameterized-host` (Azure's data-plane descriptions: `hostTemplate:
    /// {Endpoint}/language` puts every operation under `/language`, as Azure's SDKs and its
    /// validator, oav, call them). The template's variables take their parameters' `default`, or
    /// their first `enum` value; one with neither stays as written.
    static func swagger2BasePath(_ root: Value) -> String {
        var base = root["basePath"]?.string ?? ""
        while base.hasSuffix("/") { base.removeLast() }
        guard let host = root["x-ms-parameterized-host"], let template = host["hostTemplate"]?.string else {
            return base
        }
        var rest = template[...]
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            rest = rest[rest.index(colon, offsetBy: 3)...]
        }
        // The host ends at the first `/` outside a variable.
        var depth = 0
        var pathStart: Substring.Index?
        for index in rest.indices {
            switch rest[index] {
            case "{": depth += 1
            case "}": depth -= 1
            case "/" where depth == 0: pathStart = index
            default: continue
            }
            if pathStart != nil { break }
        }
        guard let pathStart else { return base }
        var path = ""
        var remaining = rest[pathStart...]
        while let open = remaining.firstIndex(of: "{"), let close = remaining[open...].firstIndex(of: "}") {
            path += remaining[..<open]
            let name = String(remaining[remaining.index(after: open)..<close])
            path += hostParameterValue(name, host: host, root: root) ?? String(remaining[open...close])
            remaining = remaining[remaining.index(after: close)...]
        }
        path += remaining
        while path.hasSuffix("/") { path.removeLast() }
        return path + base
    }

    /// The value of the `x-ms-parameterized-host` parameter `name`: its `default` or first `enum`
    /// value, inline or through a `$ref` to the document's own `parameters`.
    private static func hostParameterValue(_ name: String, host: Value, root: Value) -> String? {
        for item in host["parameters"]?.items ?? [] {
            var parameter = item
            if let reference = item["$ref"]?.string, reference.hasPrefix("#/parameters/") {
                parameter = root["parameters"]?[String(reference.dropFirst("#/parameters/".count))] ?? item
            }
            guard parameter["name"]?.string == name else { continue }
            return parameter["default"]?.string ?? parameter["enum"]?.items?.first?.string
        }
        return nil
    }
}
