/// One schema object being compiled: its value, where it is, and readers for its keywords.
struct KeywordReader {
    let value: Value
    let location: SchemaLocation
    let compiler: SchemaCompiler

    /// The location of a keyword's value.
    func child(_ name: String) -> SchemaLocation {
        SchemaLocation(document: location.document, pointer: location.pointer + "/" + Value.escape(name))
    }

    /// The location of a member of a keyword's object (`properties/name`) or item of its array.
    func child(_ name: String, _ member: String) -> SchemaLocation {
        SchemaLocation(document: location.document, pointer: child(name).pointer + "/" + Value.escape(member))
    }

    func error(_ name: String, _ message: String) -> ContractError { compiler.error(child(name), message) }

    /// The schema a keyword holds, compiled; `nil` when absent.
    func sub(_ name: String) throws(ContractError) -> Schema? {
        guard value[name] != nil else { return nil }
        return try compiler.compile(child(name))
    }

    /// The schemas of a keyword's array, compiled.
    func subs(_ name: String) throws(ContractError) -> [Schema] {
        guard let entry = value[name] else { return [] }
        guard let items = entry.items else { throw error(name, "\(name) must be an array of schemas") }
        var out: [Schema] = []
        for index in items.indices { out.append(try compiler.compile(child(name, String(index)))) }
        return out
    }

    func count(_ name: String) throws(ContractError) -> Int? {
        guard let entry = value[name] else { return nil }
        guard let number = entry.number, number.isInteger, !number.negative, let integer = number.integer else {
            throw error(name, "\(name) must be a non-negative integer")
        }
        return integer
    }

    /// The members of a keyword whose value is a map of schemas (`properties`), and where the map
    /// is. A map that is itself `{"$ref": "attributes.yml#/ids"}` is read as a JSON Reference to the
    /// map (large OpenAPI descriptions write it; Redocly and Prism resolve it); a member named
    /// `$ref` whose value is a schema stays a member.
    func map(_ name: String) throws(ContractError) -> (members: [(String, Value)], at: SchemaLocation)? {
        guard let entry = value[name] else { return nil }
        guard let members = entry.members else { throw error(name, "\(name) must be an object") }
        guard members.count == 1, let reference = entry["$ref"]?.string else { return (members, child(name)) }
        let base = compiler.registry.scope(at: location).base
        let target = try compiler.registry.locate(reference, base: base)
        guard let resolved = compiler.registry.value(at: target)?.members else {
            throw error(name, "\(name): $ref \"\(reference)\" is not an object of schemas")
        }
        return (resolved, target)
    }

    func number(_ name: String) throws(ContractError) -> Number? {
        guard let entry = value[name] else { return nil }
        guard let number = entry.number else { throw error(name, "\(name) must be a number") }
        return number
    }
}

/// The keyword families of ``SchemaCompiler``'s `fill`, each read according to the dialect.
extension SchemaCompiler {
    /// Kubernetes' IntOrString (a port, `maxSurge`): `type: string` with `format: int-or-string`
    /// (its Swagger 2.0 description) or `x-kubernetes-int-or-string: true` (its 3.0 one and CRDs)
    /// takes an integer too, as kube-openapi reads it: API servers send `targetPort: 8080`.
    static func intOrString(_ value: Value) -> Bool {
        value["format"]?.string == "int-or-string" || value["x-kubernetes-int-or-string"]?.bool == true
    }

    /// `x-nullable: true` (go-swagger's `x-isnullable` too): Swagger 2.0 tools' null.
    static func vendorNullable(_ value: Value) -> Bool {
        value["x-nullable"]?.bool == true || value["x-isnullable"]?.bool == true
    }

    /// `$ref`, `$dynamicRef` (2020-12), `$recursiveRef` (2019-09). Returns `false` when a `$ref`
    /// hides its siblings (before 2019-09): nothing else of the schema is read.
    func fillReferences(
        _ node: Schema, _ keywords: KeywordReader, scope: (base: String, dialect: Dialect, validation: Bool)
    ) throws(ContractError) -> Bool {
        let value = keywords.value
        let dialect = scope.dialect
        if let reference = value["$ref"] {
            guard let text = reference.string else { throw keywords.error("$ref", "$ref must be a string") }
            // One that cannot be followed is said where it is written, not where it points.
            let target: SchemaLocation
            do {
                target = try registry.locate(text, base: scope.base)
            } catch {
                throw keywords.error("$ref", SchemaRegistry.unresolved(text, error, from: keywords.location.document))
            }
            node.ref = try compile(target)
            if dialect.refOverridesSiblings { return false }
        }
        if dialect == .draft2020, let reference = value["$dynamicRef"]?.string {
            let target = try registry.locate(reference, base: scope.base)
            let targetNode = try compile(target)
            var anchor: String?
            let fragment = URIReference(reference).fragment ?? ""
            if !fragment.isEmpty, !fragment.hasPrefix("/"),
                registry.value(at: target)?["$dynamicAnchor"]?.string == fragment
            {
                anchor = fragment
                usesDynamicReferences = true
            }
            node.dynamicRef = Schema.DynamicRef(target: targetNode, anchor: anchor)
        }
        if dialect == .draft2019, let reference = value["$recursiveRef"]?.string {
            // Like `$ref`, unless its target says `$recursiveAnchor: true`: then the outermost
            // resource of the dynamic scope that says so too (JSON Schema 2019-09 §8.2.4.2).
            let target = try registry.locate(reference, base: scope.base)
            var anchor: String?
            if registry.value(at: target)?["$recursiveAnchor"]?.bool == true {
                anchor = SchemaRegistry.recursiveAnchor
                usesDynamicReferences = true
            }
            node.dynamicRef = Schema.DynamicRef(target: try compile(target), anchor: anchor)
        }
        return true
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` (always on: the applicator vocabulary).
    func fillApplicators(_ node: Schema, _ keywords: KeywordReader, dialect: Dialect) throws(ContractError) {
        node.allOf = try keywords.subs("allOf")
        node.anyOf = try keywords.subs("anyOf")
        node.oneOf = try keywords.subs("oneOf")
        node.not = try keywords.sub("not")
        if dialect != .draft4 && dialect != .draft6 && dialect != .openAPI30 {
            node.ifSchema = try keywords.sub("if")
            if node.ifSchema != nil {
                node.thenSchema = try keywords.sub("then")
                node.elseSchema = try keywords.sub("else")
            }
        }
    }

    /// `prefixItems`/`items` (2020-12), `items`/`additionalItems` (earlier), `contains`,
    /// `unevaluatedItems`.
    func fillArrays(_ node: Schema, _ keywords: KeywordReader, dialect: Dialect) throws(ContractError) {
        if dialect == .draft2020 {
            node.prefixItems = try keywords.subs("prefixItems")
            node.items = try keywords.sub("items")
        } else if let items = keywords.value["items"] {
            if case .array = items {
                node.prefixItems = try keywords.subs("items")
                node.items = try keywords.sub("additionalItems")
            } else {
                node.items = try keywords.sub("items")
            }
        }
        if dialect != .draft4 && dialect != .openAPI30 { node.contains = try keywords.sub("contains") }
        if dialect.isModern { node.unevaluatedItems = try keywords.sub("unevaluatedItems") }
    }

    /// A property schema's `readOnly` and `writeOnly`: its own, or those of the schemas it
    /// `$ref`s or `allOf`s (a Reference Object stands for its target, OAS 3.0.3 §4.7.24: an
    /// `id: {$ref: Id}` whose `Id` is read-only is not required in a request).
    func accessFlags(at location: SchemaLocation, hops: Int = 0) -> (readOnly: Bool, writeOnly: Bool) {
        if let known = accessFlagsFound[location.key] { return known ?? (false, false) }
        guard hops < 32, let value = registry.value(at: location) else { return (false, false) }
        accessFlagsFound[location.key] = .some(nil)
        let flags = followedAccessFlags(value, at: location, hops: hops)
        accessFlagsFound[location.key] = flags
        return flags
    }

    private func followedAccessFlags(_ value: Value, at location: SchemaLocation, hops: Int) -> (
        readOnly: Bool, writeOnly: Bool
    ) {
        var flags = (readOnly: value["readOnly"]?.bool == true, writeOnly: value["writeOnly"]?.bool == true)
        var targets: [SchemaLocation] = []
        if let reference = value["$ref"]?.string,
            let target = try? registry.locate(reference, base: registry.scope(at: location).base)
        {
            targets.append(target)
        }
        for index in (value["allOf"]?.items ?? []).indices {
            targets.append(SchemaLocation(document: location.document, pointer: location.pointer + "/allOf/\(index)"))
        }
        for target in targets where !(flags.readOnly && flags.writeOnly) {
            let found = accessFlags(at: target, hops: hops + 1)
            flags = (flags.readOnly || found.readOnly, flags.writeOnly || found.writeOnly)
        }
        return flags
    }

    /// `properties` (with OpenAPI's `readOnly`/`writeOnly`), `patternProperties`,
    /// `additionalProperties`, `propertyNames`, `unevaluatedProperties`, `dependentSchemas`,
    /// `dependencies`, `discriminator`.
    func fillObjects(
        _ node: Schema, _ keywords: KeywordReader, scope: (base: String, dialect: Dialect, validation: Bool)
    ) throws(ContractError) {
        let value = keywords.value
        let dialect = scope.dialect
        if let (members, map) = try keywords.map("properties") {
            for (name, _) in members {
                let index = node.keys.index(of: name)
                while node.propertySchemas.count <= index { node.propertySchemas.append(nil) }
                let location = SchemaLocation(document: map.document, pointer: map.pointer + "/" + Value.escape(name))
                node.propertySchemas[index] = try compile(location)
                if index < 64 {
                    let access = accessFlags(at: location)
                    if access.readOnly { node.readOnlyMask |= 1 << UInt64(index) }
                    if access.writeOnly { node.writeOnlyMask |= 1 << UInt64(index) }
                    if access.readOnly || access.writeOnly, dialect == .openAPI30 { node.rejectsAccess = true }
                }
            }
        }
        if let (patterns, map) = try keywords.map("patternProperties") {
            for (source, _) in patterns {
                let pattern = try compilePattern(source, at: map)
                let location = SchemaLocation(document: map.document, pointer: map.pointer + "/" + Value.escape(source))
                node.patternProperties.append((pattern, try compile(location)))
            }
        }
        node.additionalProperties = try keywords.sub("additionalProperties")
        if dialect != .draft4 && dialect != .openAPI30 { node.propertyNames = try keywords.sub("propertyNames") }
        if dialect.isModern {
            node.unevaluatedProperties = try keywords.sub("unevaluatedProperties")
            for (name, _) in value["dependentSchemas"]?.members ?? [] {
                node.dependentSchemas.append(
                    (node.keys.index(of: name), try compile(keywords.child("dependentSchemas", name))))
            }
        }
        // `dependencies` (draft-04 to 07) split into `dependentSchemas` and `dependentRequired` in
        // 2019-09; later documents still write it, and the suite's compatibility tests expect it
        // honoured, so every dialect reads it.
        for (name, dependency) in value["dependencies"]?.members ?? [] {
            let trigger = node.keys.index(of: name)
            if let names = dependency.items {
                if scope.validation {
                    node.dependentRequired.append((trigger, names.compactMap(\.string).map { node.keys.index(of: $0) }))
                }
            } else {
                node.dependentSchemas.append((trigger, try compile(keywords.child("dependencies", name))))
            }
        }
        if let discriminator = value["discriminator"]?.members, !node.oneOf.isEmpty || !node.anyOf.isEmpty {
            try readDiscriminator(
                node, discriminator, value: value, scope: scope.base, at: keywords.child("discriminator"))
        }
        while node.propertySchemas.count < node.keys.count { node.propertySchemas.append(nil) }
    }

    /// `types` with integers read by their form where `dialect` reads them so (draft-04, OpenAPI
    /// 3.0 and Swagger 2.0: ``Schema/Types/integerByForm``).
    static func integersByForm(_ types: Schema.Types, _ dialect: Dialect) -> Schema.Types {
        guard types.contains(.integer), !types.contains(.number), dialect == .draft4 || dialect == .openAPI30
        else { return types }
        return types.union(.integerByForm)
    }

    /// The validation vocabulary: `type`, `enum`, `const`, the number, string, array and object
    /// bounds, `required`, `dependentRequired` (OpenAPI 3.0's `nullable` and boolean exclusive
    /// bounds included).
    func fillValidation(_ node: Schema, _ keywords: KeywordReader, dialect: Dialect) throws(ContractError) {
        let value = keywords.value
        if let type = value["type"] {
            node.typesWritten = true
            let names: [String]
            switch type {
            case .string(let name): names = [name]
            case .array(let items): names = items.compactMap(\.string)
            default: throw keywords.error("type", "type must be a string or an array of strings")
            }
            var types: Schema.Types = []
            for name in names {
                switch name {
                case "null": types.insert(.null)
                case "boolean": types.insert(.boolean)
                case "object": types.insert(.object)
                case "array": types.insert(.array)
                case "number": types.formUnion([.number, .integer])
                case "integer": types.insert(.integer)
                case "string": types.insert(.string)
                default: throw keywords.error("type", "unknown type \"\(name)\"")
                }
            }
            // (`x-nullable`: how Swagger 2.0 descriptions write it: go-swagger, NSwag, AutoRest.)
            if dialect == .openAPI30, value["nullable"]?.bool == true || Self.vendorNullable(value) {
                types.insert(.null)
            }
            if Self.intOrString(value), types.contains(.string) { types.insert(.integer) }
            node.types = Self.integersByForm(types, dialect)
        } else if value["x-kubernetes-int-or-string"]?.bool == true {
            node.typesWritten = true
            node.types = Self.integersByForm([.integer, .string], dialect)
        }
        // AutoRest's `x-ms-enum: {modelAsString: true}` (Azure's descriptions): the values are the
        // known ones of an extensible set, not a limit (Azure's own validator, oav, reads it so).
        if let values = value["enum"], value["x-ms-enum"]?["modelAsString"]?.bool != true {
            guard let items = values.items else { throw keywords.error("enum", "enum must be an array") }
            // OpenAPI 3.0.3: `nullable` adds null to `type` only; "other Schema Object constraints
            // retain their defined behavior", so an enum admits null only when it lists it.
            node.enumValues = items
            // The vendor flag admits null whatever the enum lists (go-swagger, NSwag and AutoRest
            // read it so); OAS 3.0.3's `nullable` does not.
            if dialect == .openAPI30, Self.vendorNullable(value), !items.contains(.null) {
                node.enumValues = items + [.null]
            }
            node.needsWholeValue = items.contains { $0.items != nil || $0.members != nil }
        }
        if dialect != .draft4 && dialect != .openAPI30, let constant = value["const"] {
            node.constValue = constant
            if constant.items != nil || constant.members != nil { node.needsWholeValue = true }
        }
        try fillBounds(node, keywords, dialect: dialect)
        if let required = value["required"] {
            guard let names = required.items?.compactMap(\.string) else {
                throw keywords.error("required", "required must be an array of strings")
            }
            for name in names {
                let index = node.keys.index(of: name)
                if index < 64 { node.requiredMask |= 1 << UInt64(index) } else { node.requiredBeyond.append(index) }
            }
        }
        if dialect.isModern, let dependent = value["dependentRequired"]?.members {
            for (name, names) in dependent {
                let trigger = node.keys.index(of: name)
                node.dependentRequired.append(
                    (trigger, (names.items ?? []).compactMap(\.string).map { node.keys.index(of: $0) }))
            }
        }
    }

    /// Number, string, array and object bounds.
    private func fillBounds(_ node: Schema, _ keywords: KeywordReader, dialect: Dialect) throws(ContractError) {
        let value = keywords.value
        node.minimum = try keywords.number("minimum")
        node.maximum = try keywords.number("maximum")
        // draft-04 and OpenAPI 3.0 write exclusiveness as a boolean beside minimum/maximum (a
        // number there is ignored, warned elsewhere); later dialects take the bound itself. Real
        // 3.1 descriptions carry the boolean over (OpenAI's): it has one meaning, read so with a
        // warning, rather than the whole contract refused for one keyword.
        let booleanForm = dialect == .draft4 || dialect == .openAPI30
        for name in ["exclusiveMinimum", "exclusiveMaximum"] {
            let isMinimum = name == "exclusiveMinimum"
            guard let flag = value[name]?.bool else {
                guard !booleanForm else { continue }
                let bound = try keywords.number(name)
                if isMinimum { node.exclusiveMinimum = bound } else { node.exclusiveMaximum = bound }
                continue
            }
            if !booleanForm, warnedKeywords.insert("boolean \(name)").inserted {
                registry.warn(
                    keywords.error(
                        name,
                        "\(name) with a boolean is the draft-04 / OpenAPI 3.0 form; this dialect takes a number: read as 3.0 reads it (said once)"
                    ))
            }
            guard flag else { continue }
            if isMinimum {
                node.exclusiveMinimum = node.minimum
                node.minimum = nil
            } else {
                node.exclusiveMaximum = node.maximum
                node.maximum = nil
            }
        }
        if let divisor = try keywords.number("multipleOf") {
            guard !divisor.negative, !divisor.isZero else {
                throw keywords.error("multipleOf", "multipleOf must be above 0")
            }
            node.multipleOf = divisor
        }
        node.minLength = try keywords.count("minLength")
        node.maxLength = try keywords.count("maxLength")
        if let source = value["pattern"] {
            guard let text = source.string else { throw keywords.error("pattern", "pattern must be a string") }
            node.pattern = try compilePattern(text, at: keywords.child("pattern"), orWarn: true)
        }
        node.minItems = try keywords.count("minItems")
        node.maxItems = try keywords.count("maxItems")
        node.uniqueItems = value["uniqueItems"]?.bool ?? false
        if node.contains != nil, dialect.isModern {
            node.minContains = try keywords.count("minContains") ?? 1
            node.maxContains = try keywords.count("maxContains")
        }
        node.minProperties = try keywords.count("minProperties")
        node.maxProperties = try keywords.count("maxProperties")
    }
}
