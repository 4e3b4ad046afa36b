import Regexp

/// How `format` is treated: an annotation (JSON Schema 2020-12's default) or an assertion.
public enum FormatMode: String, Sendable {
    case annotate, assert
}

/// Turns schema documents into ``Schema`` graphs: one node per schema location, shared and
/// cyclic where `$ref`s are, each keyword read according to its dialect.
final class SchemaCompiler {
    let registry: SchemaRegistry
    let formats: FormatMode
    private var compiled: [String: Schema] = [:]
    private(set) var all: [Schema] = []
    /// Document URIs written as `#…` in locations (the contract's own file).
    let home: String?
    /// The directory of the contract's own file (`file:///…/contracts/`), for shorter locations.
    var homeDirectory: String? {
        guard let home, home.hasPrefix("file://"), let slash = home.lastIndex(of: "/") else { return nil }
        return String(home[...slash])
    }
    /// A `$dynamicRef` with a dynamic anchor was compiled: slots track their dynamic scope.
    private(set) var usesDynamicReferences = false

    init(registry: SchemaRegistry, formats: FormatMode, home: String? = nil) {
        self.registry = registry
        self.formats = formats
        self.home = home
    }

    /// The schema a reference names.
    func compile(reference: String, base: String) throws(ContractError) -> Schema {
        try compile(try registry.locate(reference, base: base))
    }

    func compile(_ location: SchemaLocation) throws(ContractError) -> Schema {
        if let known = compiled[location.key] { return known }
        let shown: String
        if location.document == home {
            shown = "#" + location.pointer
        } else if let directory = homeDirectory, location.document.hasPrefix(directory) {
            // Beside the contract: `schemas/item.yaml#/Item/properties/price`.
            shown = String(location.document.dropFirst(directory.count)) + "#" + location.pointer
        } else {
            shown = location.document + "#" + location.pointer
        }
        let node = Schema(location: shown)
        compiled[location.key] = node
        all.append(node)
        guard let value = registry.value(at: location) else {
            throw error(location, "no schema here")
        }
        try fill(node, from: value, at: location)
        node.finish()
        return node
    }

    /// After the last compile: a schema that is only a `$ref` is replaced by its target wherever
    /// it is used, so that the validator follows no extra step on the common path.
    func finish() {
        for node in all { shortcut(node) }
        for node in all { node.freeze() }
    }

    private func alias(_ node: Schema?) -> Schema? {
        guard var current = node else { return nil }
        var steps = 0
        while let target = current.ref, current.isPureReference, steps < 32,
            !usesDynamicReferences || target.resource == current.resource
        {
            current = target
            steps += 1
        }
        return current
    }

    private func shortcut(_ node: Schema) {
        node.propertySchemas = node.propertySchemas.map { alias($0) }
        node.prefixItems = node.prefixItems.map { alias($0)! }
        node.items = alias(node.items)
        node.additionalProperties = alias(node.additionalProperties)
        node.patternProperties = node.patternProperties.map { ($0.0, alias($0.1)!) }
        node.contains = alias(node.contains)
        node.unevaluatedItems = alias(node.unevaluatedItems)
        node.unevaluatedProperties = alias(node.unevaluatedProperties)
        node.propertyNames = alias(node.propertyNames)
    }

    func error(_ location: SchemaLocation, _ message: String) -> ContractError {
        ContractError(
            file: location.document, line: registry.documents[location.document]?.line(of: location.pointer),
            pointer: location.pointer, message: message)
    }

    // MARK: - Keywords

    private func fill(_ node: Schema, from value: Value, at location: SchemaLocation) throws(ContractError) {
        let scope = registry.scope(at: location)
        node.resource = scope.base
        switch value {
        case .bool(let constant):
            node.constant = constant
            return
        case .object:
            break
        default:
            throw error(location, "a schema must be an object or a boolean, not \(value.typeName)")
        }
        let dialect = scope.dialect
        if let metaSchema = value["$schema"]?.string, location.pointer.isEmpty || value[dialect.idKeyword] != nil,
            Dialect(metaSchema: metaSchema) == nil, registry.documents[URIReference(metaSchema).withoutFragment] == nil
        {
            throw error(location, "unknown dialect \"\(metaSchema)\" ($schema)")
        }
        warnUnknownKeywords(value, at: location)
        func child(_ name: String) -> SchemaLocation {
            SchemaLocation(document: location.document, pointer: location.pointer + "/" + Value.escape(name))
        }
        func sub(_ name: String) throws(ContractError) -> Schema? {
            guard value[name] != nil else { return nil }
            return try compile(child(name))
        }
        func subs(_ name: String) throws(ContractError) -> [Schema] {
            guard let entry = value[name] else { return [] }
            guard let items = entry.items else { throw error(child(name), "\(name) must be an array of schemas") }
            var out: [Schema] = []
            for index in items.indices {
                out.append(
                    try compile(SchemaLocation(document: location.document, pointer: child(name).pointer + "/\(index)"))
                )
            }
            return out
        }
        func count(_ name: String) throws(ContractError) -> Int? {
            guard let entry = value[name] else { return nil }
            guard let number = entry.number, number.isInteger, !number.negative, let integer = number.integer else {
                throw error(child(name), "\(name) must be a non-negative integer")
            }
            return integer
        }
        func number(_ name: String) throws(ContractError) -> Number? {
            guard let entry = value[name] else { return nil }
            guard let number = entry.number else { throw error(child(name), "\(name) must be a number") }
            return number
        }

        if let reference = value["$ref"] {
            guard let text = reference.string else { throw error(child("$ref"), "$ref must be a string") }
            node.ref = try compile(reference: text, base: scope.base)
            if dialect.refOverridesSiblings {
                return
            }
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

        // Applicators (always on: the applicator vocabulary).
        node.allOf = try subs("allOf")
        node.anyOf = try subs("anyOf")
        node.oneOf = try subs("oneOf")
        node.not = try sub("not")
        if dialect != .draft4 && dialect != .draft6 && dialect != .openAPI30 {
            node.ifSchema = try sub("if")
            if node.ifSchema != nil {
                node.thenSchema = try sub("then")
                node.elseSchema = try sub("else")
            }
        }
        // Arrays.
        if dialect == .draft2020 {
            node.prefixItems = try subs("prefixItems")
            node.items = try sub("items")
        } else if let items = value["items"] {
            if case .array = items {
                node.prefixItems = try subs("items")
                node.items = try sub("additionalItems")
            } else {
                node.items = try sub("items")
            }
        }
        if dialect != .draft4 && dialect != .openAPI30 { node.contains = try sub("contains") }
        if dialect.isModern { node.unevaluatedItems = try sub("unevaluatedItems") }
        // Objects.
        if let properties = value["properties"] {
            guard let members = properties.members else {
                throw error(child("properties"), "properties must be an object")
            }
            for (name, _) in members {
                let index = node.keys.index(of: name)
                while node.propertySchemas.count <= index { node.propertySchemas.append(nil) }
                let location = SchemaLocation(
                    document: location.document, pointer: child("properties").pointer + "/" + Value.escape(name))
                let property = try compile(location)
                node.propertySchemas[index] = property
                if index < 64, let propertyValue = registry.value(at: location) {
                    if propertyValue["readOnly"]?.bool == true { node.readOnlyMask |= 1 << UInt64(index) }
                    if propertyValue["writeOnly"]?.bool == true { node.writeOnlyMask |= 1 << UInt64(index) }
                }
            }
        }
        if let patterns = value["patternProperties"]?.members {
            for (source, _) in patterns {
                let pattern = try compilePattern(source, at: child("patternProperties"))
                let schema = try compile(
                    SchemaLocation(
                        document: location.document,
                        pointer: child("patternProperties").pointer + "/" + Value.escape(source)))
                node.patternProperties.append((pattern, schema))
            }
        }
        node.additionalProperties = try sub("additionalProperties")
        if dialect != .draft4 && dialect != .openAPI30 { node.propertyNames = try sub("propertyNames") }
        if dialect.isModern {
            node.unevaluatedProperties = try sub("unevaluatedProperties")
            if let dependent = value["dependentSchemas"]?.members {
                for (name, _) in dependent {
                    let schema = try compile(
                        SchemaLocation(
                            document: location.document,
                            pointer: child("dependentSchemas").pointer + "/" + Value.escape(name)))
                    node.dependentSchemas.append((node.keys.index(of: name), schema))
                }
            }
        }
        // `dependencies` (draft-04 to 07) split into `dependentSchemas` and `dependentRequired` in
        // 2019-09; later documents still write it, and the suite's compatibility tests expect it
        // honoured, so every dialect reads it.
        if let dependencies = value["dependencies"]?.members {
            for (name, dependency) in dependencies {
                let trigger = node.keys.index(of: name)
                if let names = dependency.items {
                    if scope.validation {
                        node.dependentRequired.append(
                            (trigger, names.compactMap(\.string).map { node.keys.index(of: $0) }))
                    }
                } else {
                    let schema = try compile(
                        SchemaLocation(
                            document: location.document,
                            pointer: child("dependencies").pointer + "/" + Value.escape(name)))
                    node.dependentSchemas.append((trigger, schema))
                }
            }
        }
        if let discriminator = value["discriminator"]?.members, !node.oneOf.isEmpty || !node.anyOf.isEmpty {
            try readDiscriminator(node, discriminator, value: value, scope: scope.base, at: child("discriminator"))
        }
        while node.propertySchemas.count < node.keys.count { node.propertySchemas.append(nil) }

        // The format vocabulary: asserted by configuration, or by a meta-schema's format-assertion.
        if formats == .assert || registry.formatAssertingResources.contains(scope.base),
            let name = value["format"]?.string
        {
            node.format = Format(name)
        }
        guard scope.validation else { return }
        // The validation vocabulary.
        if let type = value["type"] {
            node.typesWritten = true
            let names: [String]
            switch type {
            case .string(let name): names = [name]
            case .array(let items): names = items.compactMap(\.string)
            default: throw error(child("type"), "type must be a string or an array of strings")
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
                default: throw error(child("type"), "unknown type \"\(name)\"")
                }
            }
            if dialect == .openAPI30, value["nullable"]?.bool == true { types.insert(.null) }
            node.types = types
        }
        if let values = value["enum"] {
            guard let items = values.items else { throw error(child("enum"), "enum must be an array") }
            var items30 = items
            // OpenAPI 3.0: `nullable: true` admits null even when enum does not list it.
            if dialect == .openAPI30, value["nullable"]?.bool == true, !items.contains(.null) { items30.append(.null) }
            node.enumValues = items30
            node.needsWholeValue = items.contains { $0.items != nil || $0.members != nil }
        }
        if dialect != .draft4 && dialect != .openAPI30, let constant = value["const"] {
            node.constValue = constant
            if constant.items != nil || constant.members != nil { node.needsWholeValue = true }
        }
        node.minimum = try number("minimum")
        node.maximum = try number("maximum")
        if dialect == .draft4 || dialect == .openAPI30 {
            if value["exclusiveMinimum"]?.bool == true {
                node.exclusiveMinimum = node.minimum
                node.minimum = nil
            }
            if value["exclusiveMaximum"]?.bool == true {
                node.exclusiveMaximum = node.maximum
                node.maximum = nil
            }
        } else {
            node.exclusiveMinimum = try number("exclusiveMinimum")
            node.exclusiveMaximum = try number("exclusiveMaximum")
        }
        if let divisor = try number("multipleOf") {
            guard !divisor.negative, !divisor.isZero else {
                throw error(child("multipleOf"), "multipleOf must be above 0")
            }
            node.multipleOf = divisor
        }
        node.minLength = try count("minLength")
        node.maxLength = try count("maxLength")
        if let source = value["pattern"] {
            guard let text = source.string else { throw error(child("pattern"), "pattern must be a string") }
            node.pattern = try compilePattern(text, at: child("pattern"))
        }
        node.minItems = try count("minItems")
        node.maxItems = try count("maxItems")
        node.uniqueItems = value["uniqueItems"]?.bool ?? false
        if node.contains != nil {
            if dialect.isModern {
                node.minContains = try count("minContains") ?? 1
                node.maxContains = try count("maxContains")
            }
        }
        node.minProperties = try count("minProperties")
        node.maxProperties = try count("maxProperties")
        if let required = value["required"] {
            guard let names = required.items?.compactMap(\.string) else {
                throw error(child("required"), "required must be an array of strings")
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
        while node.propertySchemas.count < node.keys.count { node.propertySchemas.append(nil) }
    }

    /// Every keyword Sluice reads or knows to be an annotation, in any dialect it compiles.
    private static let knownKeywords: Set<String> = [
        "$schema", "$id", "id", "$ref", "$dynamicRef", "$dynamicAnchor", "$anchor", "$recursiveRef",
        "$recursiveAnchor", "$defs", "definitions", "$vocabulary", "$comment", "allOf", "anyOf", "oneOf", "not", "if",
        "then", "else", "prefixItems", "items", "additionalItems", "contains", "minContains", "maxContains",
        "unevaluatedItems", "properties", "patternProperties", "additionalProperties", "propertyNames",
        "unevaluatedProperties", "dependentSchemas", "dependentRequired", "dependencies", "type", "enum", "const",
        "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
        "pattern", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "required", "format",
        "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "example",
        "contentEncoding", "contentMediaType", "contentSchema", "nullable", "discriminator", "xml", "externalDocs",
    ]
    private var warnedKeywords: Set<String> = []

    /// An unknown keyword is an annotation (JSON Schema says so); said once per name, with where.
    private func warnUnknownKeywords(_ value: Value, at location: SchemaLocation) {
        guard let members = value.members else { return }
        for (key, _) in members
        where !Self.knownKeywords.contains(key) && !key.hasPrefix("x-") && !warnedKeywords.contains(key) {
            warnedKeywords.insert(key)
            registry.warn(error(location, "unknown keyword \"\(key)\" (ignored; said once)"))
        }
    }

    private func compilePattern(_ source: String, at location: SchemaLocation) throws(ContractError) -> Pattern {
        do {
            return try Pattern(source)
        } catch {
            throw self.error(location, "pattern \"\(source)\" does not compile: \(error)")
        }
    }

}

extension Schema {
    /// Only a `$ref` (annotations aside): replaceable by its target.
    var isPureReference: Bool {
        ref != nil && constant == nil && types == .all && enumValues == nil && constValue == nil && !hasNumberChecks
            && !hasStringChecks && !hasArrayChecks && !hasObjectChecks && allOf.isEmpty && anyOf.isEmpty
            && oneOf.isEmpty && not == nil && ifSchema == nil && dynamicRef == nil && dependentSchemas.isEmpty
            && dependentRequired.isEmpty && requiredMask == 0 && requiredBeyond.isEmpty && minContains == 1
    }
}
