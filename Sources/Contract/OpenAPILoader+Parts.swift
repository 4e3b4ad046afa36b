// Parameters, Header Objects, request bodies and responses of an OpenAPI document, as the
// loader reads them.

extension OpenAPILoader {
    /// Header names OpenAPI 3 does not take as parameters (lower-cased).
    static let headersNotParameters: Set<String> = ["accept", "content-type", "authorization"]

    mutating func parameters(_ value: Value?, at location: SchemaLocation, pointer: String)
        throws(ContractError)
        -> [ParameterDraft]
    {
        guard let items = value?.items else { return [] }
        var out: [ParameterDraft] = []
        for (index, raw) in items.enumerated() {
            let itemLocation = SchemaLocation(document: location.document, pointer: pointer + "/\(index)")
            let (parameter, resolved) = try resolve(raw, at: itemLocation)
            // 2.0's body and form parameters are its request body (``swagger2RequestBody``).
            if swagger2, let place = parameter["in"]?.string, place == "body" || place == "formData" { continue }
            guard let name = parameter["name"]?.string, let place = parameter["in"]?.string else {
                warnings.append(
                    warn(itemLocation.pointer, "a parameter without name or in (ignored)", file: itemLocation.document))
                continue
            }
            guard let kind = OpenAPIContract.Parameter.Location(rawValue: place), kind != .querystring || reads32 else {
                let known =
                    swagger2
                    ? "path, query, header, body or formData"
                    : reads32 ? "path, query, querystring, header or cookie" : "path, query, header or cookie"
                warnings.append(
                    warn(
                        itemLocation.pointer + "/in", "a parameter in \"\(place)\", not \(known) (ignored)",
                        file: itemLocation.document))
                continue
            }
            // OpenAPI 3 (Parameter Object, `name`): a header parameter named Accept, Content-Type
            // or Authorization SHALL be ignored: the media types and security schemes say those.
            if !swagger2, kind == .header, Self.headersNotParameters.contains(name.lowercased()) { continue }
            if swagger2 {
                // Swagger 2.0 §4.3.6's rules for a parameter that is its own schema.
                var faults: [String] = []
                if parameter["type"]?.string == "array", parameter["items"] == nil {
                    faults.append("type: array without items")
                }
                if parameter["collectionFormat"]?.string == "multi", kind != .query {
                    faults.append("collectionFormat: multi outside the query")
                }
                if parameter["allowEmptyValue"] != nil, kind != .query {
                    faults.append("allowEmptyValue outside the query")
                }
                for fault in faults {
                    warnings.append(
                        warn(itemLocation.pointer, "parameter \(name): \(fault) (ignored)", file: itemLocation.document)
                    )
                }
            }
            if kind == .path, parameter["required"]?.bool != true {
                warnings.append(
                    warn(
                        itemLocation.pointer, "path parameter \(name) does not say required: true (read as required)",
                        file: itemLocation.document))
            }
            var (read, schemaKey) = try self.parameter(
                parameter, resolved: resolved, name: name, location: kind,
                required: kind == .path || parameter["required"]?.bool == true)
            let shown = self.place(resolved).shown
            read.place = shown.isEmpty || parameter["required"] == nil ? shown : shown + "/required"
            if kind == .querystring, read.queryForm == nil {
                warnings.append(
                    warn(
                        itemLocation.pointer,
                        "a querystring parameter is described by content (one media type with a schema): not checked",
                        file: itemLocation.document))
            }
            out.append(ParameterDraft(parameter: read, schemaKey: schemaKey))
        }
        return out
    }

    /// A Parameter or Header Object (`value`, found at `resolved`): its schema (or its `content`'s,
    /// when that is JSON), and what reading its text needs: style, types of items and properties.
    mutating func parameter(
        _ value: Value, resolved: SchemaLocation, name: String, location kind: OpenAPIContract.Parameter.Location,
        required: Bool
    ) throws(ContractError) -> (OpenAPIContract.Parameter, schemaKey: String?) {
        var schemaKey: String?
        var validator: SchemaValidator?
        var type: String?
        var itemType: String?
        var propertyTypes: [String: String] = [:]
        var jsonContent = false
        var found: (pointer: String, value: Value)?
        var queryForm: OpenAPIContract.Parameter.QueryForm?
        var innerDelimiters: [String]?
        var innerItemType: String?
        var propertyItemTypes: [String: String] = [:]
        if kind == .querystring {
            // The whole query, as its one media type reads it (OAS 3.2 §4.8.12.2.1).
            if let (range, media) = value["content"]?.members?.first, let schemaValue = media["schema"] {
                found = (resolved.pointer + "/content/" + Value.escape(range) + "/schema", schemaValue)
                queryForm =
                    MediaRange.bare(range) == "application/x-www-form-urlencoded"
                    ? .form : MediaRange.isJSON(range) ? .json : .text
            }
        } else if let schemaValue = value["schema"] {
            found = (resolved.pointer + "/schema", schemaValue)
        } else if swagger2 {
            // The parameter is its own schema.
            if let (compiled, schemaValue, schemaLocation) = try swagger2Schema(of: value, at: resolved) {
                validator = compiled
                schemaKey = schemaLocation.key
                if let (typed, name) = typed(schemaValue, at: schemaLocation) {
                    type = name
                    if name == "array", let items = typed["items"] {
                        itemType = self.typed(items, at: schemaLocation)?.type
                        if itemType == "array" {
                            innerDelimiters = Self.delimiters(ofCollectionFormat: items["collectionFormat"]?.string)
                            innerItemType = items["items"].flatMap { self.typed($0, at: schemaLocation)?.type }
                        }
                    }
                }
            }
        } else if let (range, media) = value["content"]?.members?.first, MediaRange.coversJSON(range),
            let schemaValue = media["schema"]
        {
            found = (resolved.pointer + "/content/" + Value.escape(range) + "/schema", schemaValue)
            jsonContent = true
        }
        if let (schemaPointer, schemaValue) = found {
            let schemaLocation = SchemaLocation(document: resolved.document, pointer: schemaPointer)
            validator = try schema(at: schemaLocation)
            schemaKey = schemaLocation.key
            if let (typed, name) = typed(schemaValue, at: schemaLocation) {
                type = name
                if name == "array", let items = typed["items"] {
                    itemType = self.typed(items, at: schemaLocation)?.type
                }
                for (property, member) in typed["properties"]?.members ?? [] {
                    guard let (memberSchema, name) = self.typed(member, at: schemaLocation) else { continue }
                    propertyTypes[property] = name
                    if name == "array", let items = memberSchema["items"],
                        let itemName = self.typed(items, at: schemaLocation)?.type
                    {
                        propertyItemTypes[property] = itemName
                    }
                }
            }
        }
        var style = value["style"]?.string ?? (kind == .query || kind == .cookie ? "form" : "simple")
        var explode = value["explode"]?.bool ?? (style == "form")
        if swagger2 { (style, explode) = Self.swagger2Style(value["collectionFormat"]?.string, location: kind) }
        var parameter = OpenAPIContract.Parameter(
            name: name, location: kind, required: required, explode: explode, style: style, schema: validator,
            type: type, itemType: itemType)
        parameter.propertyTypes = propertyTypes
        parameter.jsonContent = jsonContent
        parameter.propertyItemTypes = propertyItemTypes
        parameter.queryForm = queryForm
        parameter.innerDelimiters = innerDelimiters
        parameter.innerItemType = innerItemType
        parameter.allowsEmptyValue = kind == .query && value["allowEmptyValue"]?.bool == true
        parameter.spansSegments = kind == .path && value["x-ms-skip-url-encoding"]?.bool == true
        return (parameter, schemaKey)
    }

    /// The type a parameter's text is read as, and the schema that says it: its `type` (the first
    /// that is not null), else its `enum`/`const` values' type, else the first branch of its
    /// `allOf`, `anyOf` or `oneOf` that has one (FastAPI writes `Optional[int]` as
    /// `anyOf: [{type: integer}, {type: 'null'}]`; 3.0 documents put a `$ref` in an `allOf` to
    /// describe it), `$ref`s followed; `nil` when none says.
    mutating func typed(_ schema: Value, at location: SchemaLocation, depth: Int = 0) -> (schema: Value, type: String)?
    {
        guard depth < 8, let (plain, resolved) = try? resolve(schema, at: location) else { return nil }
        if let name = Self.typeName(plain) { return (plain, name) }
        let constants = plain["enum"]?.items ?? plain["const"].map { [$0] } ?? []
        if let first = constants.first(where: { $0 != .null }) {
            switch first {
            case .bool: return (plain, "boolean")
            case .number: return (plain, "number")
            case .string: return (plain, "string")
            default: break
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in plain[key]?.items ?? [] {
                if let found = typed(branch, at: resolved, depth: depth + 1), found.type != "null" { return found }
            }
        }
        return nil
    }

    static func typeName(_ schema: Value) -> String? {
        if let type = schema["type"]?.string { return type }
        if let types = schema["type"]?.items?.compactMap(\.string) { return types.first { $0 != "null" } }
        return nil
    }

    mutating func body(_ value: Value?, at location: SchemaLocation, name: String) throws(ContractError)
        -> OpenAPIContract.Body?
    {
        guard let value else { return nil }
        let (body, resolved) = try resolve(
            value, at: SchemaLocation(document: location.document, pointer: location.pointer + "/" + name))
        return OpenAPIContract.Body(
            required: body["required"]?.bool == true, content: try content(body["content"], at: resolved))
    }

    /// A Media Type Object's `example`, and each of its `examples` (Example Objects, `$ref`s
    /// followed) that has a value (3.2's `dataValue` first; an `externalValue` is not read).
    mutating func examples(of media: Value, at location: SchemaLocation) -> [OpenAPIContract.Example] {
        var out: [OpenAPIContract.Example] = []
        if let value = media["example"] {
            out.append(
                OpenAPIContract.Example(
                    name: "example", value: value,
                    place: place(SchemaLocation(document: location.document, pointer: location.pointer + "/example"))))
        }
        for (name, raw) in media["examples"]?.members ?? [] {
            let at = SchemaLocation(
                document: location.document, pointer: location.pointer + "/examples/" + Value.escape(name))
            guard let (example, resolved) = try? resolve(raw, at: at) else { continue }
            let key = example["dataValue"] != nil ? "dataValue" : "value"
            guard let value = example[key] else { continue }
            out.append(
                OpenAPIContract.Example(
                    name: name, value: value,
                    place: place(SchemaLocation(document: resolved.document, pointer: resolved.pointer + "/" + key))))
        }
        return out
    }

    mutating func content(_ value: Value?, at location: SchemaLocation) throws(ContractError) -> [OpenAPIContract
        .Media]
    {
        guard let members = value?.members else { return [] }
        var out: [OpenAPIContract.Media] = []
        for (range, rawMedia) in members {
            let (media, mediaLocation) = try resolve(
                rawMedia,
                at: SchemaLocation(
                    document: location.document, pointer: location.pointer + "/content/" + Value.escape(range)))
            var entry = OpenAPIContract.Media(range: range)
            if media["schema"] != nil {
                entry.schema = try schema(
                    at: SchemaLocation(document: mediaLocation.document, pointer: mediaLocation.pointer + "/schema"))
            }
            entry.examples = examples(of: media, at: mediaLocation)
            if readsSequences, BodyFraming(media: range) != nil, let whole = media["schema"],
                let type = typed(whole, at: mediaLocation)?.type, type != "array"
            {
                // 3.1 descriptions put one item's schema here; 3.2 reads it as the whole stream's.
                warnings.append(
                    warn(
                        mediaLocation.pointer + "/schema",
                        "schema on \(range) is the whole sequence's, read as an array (OAS 3.2), and this one is not an array: every body fails it; for each item, write itemSchema",
                        file: mediaLocation.document))
            }
            if !readsSequences, media["itemSchema"] != nil {
                warnings.append(
                    warn(
                        mediaLocation.pointer + "/itemSchema", "itemSchema is OpenAPI 3.2's: not read in this document",
                        file: mediaLocation.document))
            }
            if readsSequences, media["itemSchema"] != nil, BodyFraming(media: range) == nil {
                warnings.append(
                    warn(
                        mediaLocation.pointer + "/itemSchema",
                        "itemSchema is for sequential media types (JSON Lines, JSON text sequences, event streams): on \(range) it is not read",
                        file: mediaLocation.document))
            }
            if readsSequences, BodyFraming(media: range) == .events, let item = media["itemSchema"] {
                warnEventFields(
                    item,
                    at: SchemaLocation(document: mediaLocation.document, pointer: mediaLocation.pointer + "/itemSchema")
                )
            }
            if readsSequences {
                entry.framing = BodyFraming(media: range)
                if media["itemSchema"] != nil {
                    entry.itemSchema = try schema(
                        at: SchemaLocation(
                            document: mediaLocation.document, pointer: mediaLocation.pointer + "/itemSchema"))
                }
            }
            out.append(entry)
        }
        return out
    }

    /// An event's fields have fixed types (OAS 3.2 §4.14.4): `data`, `event` and `id` are text,
    /// `retry` an integer; a schema that types them otherwise fails every event (`data` holding
    /// JSON is described with `contentMediaType` and `contentSchema`).
    mutating func warnEventFields(_ item: Value, at location: SchemaLocation) {
        guard let (schema, _) = try? resolve(item, at: location), let properties = schema["properties"]?.members else {
            return
        }
        for (field, expected) in [("data", "string"), ("event", "string"), ("id", "string"), ("retry", "integer")] {
            guard let property = properties.first(where: { $0.0 == field })?.1,
                let type = typed(property, at: location)?.type, type != expected,
                !(expected == "integer" && type == "number")
            else { continue }
            warnings.append(
                warn(
                    location.pointer + "/properties/" + field,
                    "an event's \(field) is \(expected == "string" ? "text" : "an integer"), never \(type == "object" ? "an object" : type): every event fails this schema"
                        + (field == "data"
                            ? " (describe the JSON it holds with contentMediaType and contentSchema)" : ""),
                    file: location.document))
        }
    }

    mutating func response(_ value: Value, at location: SchemaLocation) throws(ContractError)
        -> OpenAPIContract.Response
    {
        var headers: [OpenAPIContract.Parameter] = []
        if let members = value["headers"]?.members {
            for (name, raw) in members {
                let headerLocation = SchemaLocation(
                    document: location.document, pointer: location.pointer + "/headers/" + Value.escape(name))
                let (header, resolved) = try resolve(raw, at: headerLocation)
                headers.append(
                    try parameter(
                        header, resolved: resolved, name: name, location: .header,
                        required: header["required"]?.bool == true
                    ).0)
            }
        }
        let body: OpenAPIContract.Body? =
            value["content"] != nil
            ? OpenAPIContract.Body(required: false, content: try content(value["content"], at: location)) : nil
        return OpenAPIContract.Response(headers: headers, body: body, place: place(location))
    }
}
