// Parameters, Header Objects, request bodies and responses of an OpenAPI document, as the
// loader reads them.

extension OpenAPILoader {
    mutating func parameters(_ value: Value?, at location: SchemaLocation, pointer: String)
        throws(ContractError)
        -> [ParameterDraft]
    {
        guard let items = value?.items else { return [] }
        var out: [ParameterDraft] = []
        for (index, raw) in items.enumerated() {
            let itemLocation = SchemaLocation(document: location.document, pointer: pointer + "/\(index)")
            let (parameter, resolved) = try resolve(raw, at: itemLocation)
            guard let name = parameter["name"]?.string, let place = parameter["in"]?.string,
                let kind = OpenAPIContract.Parameter.Location(rawValue: place)
            else {
                warnings.append(
                    warn(itemLocation.pointer, "a parameter without name or in (ignored)", file: itemLocation.document))
                continue
            }
            let (read, schemaKey) = try self.parameter(
                parameter, resolved: resolved, name: name, location: kind,
                required: kind == .path || parameter["required"]?.bool == true)
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
        if let schemaValue = value["schema"] {
            found = (resolved.pointer + "/schema", schemaValue)
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
            let (plain, _) = try resolve(schemaValue, at: schemaLocation)
            type = Self.typeName(plain)
            if type == "array", let items = plain["items"] {
                itemType = Self.typeName((try? resolve(items, at: schemaLocation))?.0 ?? items)
            }
            for (property, member) in plain["properties"]?.members ?? [] {
                if let name = Self.typeName((try? resolve(member, at: schemaLocation))?.0 ?? member) {
                    propertyTypes[property] = name
                }
            }
        }
        let style = value["style"]?.string ?? (kind == .query || kind == .cookie ? "form" : "simple")
        var parameter = OpenAPIContract.Parameter(
            name: name, location: kind, required: required, explode: value["explode"]?.bool ?? (style == "form"),
            style: style, schema: validator, type: type, itemType: itemType)
        parameter.propertyTypes = propertyTypes
        parameter.jsonContent = jsonContent
        return (parameter, schemaKey)
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

    mutating func content(_ value: Value?, at location: SchemaLocation) throws(ContractError) -> [(
        range: String, schema: SchemaValidator?
    )] {
        guard let members = value?.members else { return [] }
        var out: [(range: String, schema: SchemaValidator?)] = []
        for (range, rawMedia) in members {
            let (media, mediaLocation) = try resolve(
                rawMedia,
                at: SchemaLocation(
                    document: location.document, pointer: location.pointer + "/content/" + Value.escape(range)))
            if media["schema"] != nil {
                out.append(
                    (
                        range,
                        try schema(
                            at: SchemaLocation(
                                document: mediaLocation.document, pointer: mediaLocation.pointer + "/schema"))
                    ))
            } else {
                out.append((range, nil))
            }
        }
        return out
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
