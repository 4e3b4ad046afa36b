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
    /// Where each compiled node is, for messages about it after compiling.
    private var locations: [ObjectIdentifier: SchemaLocation] = [:]
    /// Each broken schema's first error. Compiling goes on past them, so that one load names
    /// them all; whoever compiles throws them (``ContractError/first(of:)``) before using a node.
    private(set) var errors: [ContractError] = []
    /// Document URIs written as `#…` in locations (the contract's own file).
    let home: String?
    /// The directory of the contract's own file (`file:///…/contracts/`), for shorter locations.
    var homeDirectory: String? {
        guard let home, home.hasPrefix("file://"), let slash = home.lastIndex(of: "/") else { return nil }
        return String(home[...slash])
    }
    /// A `$dynamicRef` with a dynamic anchor was compiled: slots track their dynamic scope.
    var usesDynamicReferences = false
    /// The schemas are a Swagger 2.0 document's (read as OpenAPI 3.0's Schema Object): warnings
    /// name 2.0 and its `x-nullable`.
    var readsSwagger2 = false

    init(registry: SchemaRegistry, formats: FormatMode, home: String? = nil) {
        self.registry = registry
        self.formats = formats
        self.home = home
    }

    /// The schema a reference names.
    func compile(reference: String, base: String) throws(ContractError) -> Schema {
        try compile(try registry.locate(reference, base: base))
    }

    /// A location as messages say it: `#/pointer` in the contract itself, `schemas/item.yaml#/…`
    /// beside it, `../common/types.json#/…` in a file above it (never the machine's absolute
    /// path), else its whole URI.
    func shown(_ location: SchemaLocation) -> String {
        if location.document == home { return "#" + location.pointer }
        if let directory = homeDirectory, location.document.hasPrefix(directory) {
            return String(location.document.dropFirst(directory.count)) + "#" + location.pointer
        }
        if let directory = homeDirectory, location.document.hasPrefix("file://") {
            let from = directory.dropFirst(7).split(separator: "/")
            let to = location.document.dropFirst(7).split(separator: "/")
            let shared = zip(from, to.dropLast()).prefix { $0 == $1 }.count
            // (A file sharing nothing with the contract's folder but `/` keeps its whole path.)
            if shared > 0 {
                let up = Array(repeating: "..", count: from.count - shared)
                return (up + to.dropFirst(shared).map(String.init)).joined(separator: "/") + "#" + location.pointer
            }
        }
        return location.document + "#" + location.pointer
    }

    func compile(_ location: SchemaLocation) throws(ContractError) -> Schema {
        if let known = compiled[location.key] { return known }
        let node = Schema(location: shown(location))
        compiled[location.key] = node
        all.append(node)
        locations[ObjectIdentifier(node)] = location
        guard var value = registry.value(at: location) else {
            throw error(location, "no schema here")
        }
        if parameterObjects.contains(location.key), let members = value.members {
            // A Swagger 2.0 parameter or header is its own schema, less what only a parameter has.
            value = .object(members.filter { !Self.parameterFields.contains($0.0) })
        }
        if Self.nullableWrapper(value), registry.scope(at: location).dialect == .openAPI30 {
            // `x-nullable: true` beside a `$ref`, or on an `allOf`/`oneOf`/`anyOf` without a type
            // (NSwag's wrapper): as the tools that write it read it, null or the schema.
            let nullNode = Schema(location: node.location + "/x-nullable")
            nullNode.types = .null
            nullNode.finish()
            let inner = Schema(location: node.location)
            all += [nullNode, inner]
            locations[ObjectIdentifier(inner)] = location
            do {
                try fill(inner, from: value, at: location)
            } catch {
                errors.append(error)
            }
            inner.finish()
            node.anyOf = [nullNode, inner]
            node.finish()
            return node
        }
        do {
            try fill(node, from: value, at: location)
        } catch {
            errors.append(error)  // the node stays as far as it was read: never validated with
        }
        node.finish()
        return node
    }

    /// Whether a schema says `x-nullable: true` (or go-swagger's `x-isnullable`) where its own
    /// `type` cannot carry it: beside a `$ref`, or on applicators without a type.
    static func nullableWrapper(_ value: Value) -> Bool {
        guard vendorNullable(value) else { return false }
        if value["$ref"] != nil { return true }
        return value["type"] == nil && (value["allOf"] != nil || value["oneOf"] != nil || value["anyOf"] != nil)
    }

    /// After the last compile: a schema that is only a `$ref` is replaced by its target wherever
    /// it is used, so that the validator follows no extra step on the common path.
    func finish() {
        warnEndlessApplication()
        for node in all { shortcut(node) }
        for node in all { node.freeze() }
    }

    /// Schemas that apply one another in place without end (`A: {$ref: B}`, `B: {allOf: [{$ref:
    /// A}]}`; JSON Schema 2020-12 §9.4.1 leaves them undefined): the validator gives up at a depth
    /// of 128 and fails the branch there, so each loop is said at load, with its path, rather
    /// than found body after body.
    /// A chain of such applications longer than 128 without a loop (`A0: {$ref: A1}` … `A130`)
    /// fails the same way: said too, with its length.
    private func warnEndlessApplication() {
        // How many schemas deep in-place application goes from each one (loops cut).
        var heights: [ObjectIdentifier: Int] = [:]
        var path: [Schema] = []
        var onPath = Set<ObjectIdentifier>()
        var warnedDeep = false
        @discardableResult
        func visit(_ node: Schema) -> Int {
            let id = ObjectIdentifier(node)
            if let known = heights[id] { return known }
            if onPath.contains(id) {
                guard let start = path.lastIndex(where: { $0 === node }), let location = locations[id] else { return 0 }
                let loop = (path[start...].map(\.location) + [node.location]).joined(separator: " → ")
                registry.warn(
                    error(
                        location,
                        "schemas that apply one another without end (\(loop)): evaluated 128 levels deep, where that branch fails"
                    ))
                return 0
            }
            onPath.insert(id)
            path.append(node)
            var height = 0
            for child in node.allOf + node.anyOf + node.oneOf + node.dependentSchemas.map(\.1) {
                height = max(height, visit(child))
            }
            for child in [node.ref, node.not, node.ifSchema, node.thenSchema, node.elseSchema] {
                if let child { height = max(height, visit(child)) }
            }
            path.removeLast()
            onPath.remove(id)
            heights[id] = height + 1
            if height + 1 > 128, !warnedDeep, let location = locations[id] {
                warnedDeep = true
                registry.warn(
                    error(
                        location,
                        "schemas that apply one another \(height + 1) levels deep ($ref or allOf chains): past 128 the validator fails that branch (said once)"
                    ))
            }
            return height + 1
        }
        for node in all { visit(node) }
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

    /// Reads one schema's keywords into its node, by family (`SchemaCompiler+Keywords.swift`):
    /// references, applicators, arrays, objects, format, then the validation vocabulary.
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
        if let metaSchema = value["$schema"]?.string,
            location.pointer.isEmpty || dialect.idKeyword.map({ value[$0] != nil }) == true,
            Dialect(metaSchema: metaSchema) == nil, registry.documents[URIReference(metaSchema).withoutFragment] == nil
        {
            throw error(location, "unknown dialect \"\(metaSchema)\" ($schema)")
        }
        warnUnknownKeywords(value, at: location, dialect: dialect)
        let keywords = KeywordReader(value: value, location: location, compiler: self)
        guard try fillReferences(node, keywords, scope: scope) else { return }
        try fillApplicators(node, keywords, dialect: dialect)
        try fillArrays(node, keywords, dialect: dialect)
        try fillObjects(node, keywords, scope: scope)
        // The format vocabulary: asserted by configuration, or by a meta-schema's format-assertion.
        if formats == .assert || registry.formatAssertingResources.contains(scope.base),
            let name = value["format"]?.string
        {
            node.format = Format(name)
        }
        if scope.validation { try fillValidation(node, keywords, dialect: dialect) }
        while node.propertySchemas.count < node.keys.count { node.propertySchemas.append(nil) }
    }

    /// Swagger 2.0 parameters and headers (by location key): schemas of their own, whose members
    /// `name`, `in`, `required` (a boolean there)… are the parameter's, not keywords.
    var parameterObjects: Set<String> = []
    static let parameterFields: Set<String> = [
        "name", "in", "required", "description", "allowEmptyValue", "collectionFormat", "schema",
    ]

    var warnedKeywords: Set<String> = []
    /// Schemas with `nullable` beside a `$ref` or `allOf` and no `type`, so far.
    var nullableWithoutType = 0
    /// Schemas of a JSON Schema dialect (3.1) with `nullable: true`, so far.
    var ignoredNullable = 0
    /// `oneOf`s under a discriminator whose branches nothing tells apart, so far.
    var overlappingBranches = 0
    /// Schemas whose asserting keywords a `$ref` beside them hides (said at each, up to 20).
    var hiddenBesideRef = 0
    /// Schemas whose `required` names a property twice, so far.
    var repeatedRequired = 0
    /// Schemas whose `default` is of a type the schema's `type` does not allow, so far.
    var defaultOfOtherType = 0
    /// ``accessFlags(at:)`` of each schema location looked at (schemas reused through `allOf`
    /// and `$ref` are followed once); `nil` while it is being worked out (a cycle adds nothing).
    var accessFlagsFound: [String: (readOnly: Bool, writeOnly: Bool)?] = [:]

    func compilePattern(_ source: String, at location: SchemaLocation) throws(ContractError) -> Pattern {
        do {
            return try Pattern(source)
        } catch {
            throw self.error(location, "pattern \"\(source)\" does not compile: \(error)")
        }
    }

    /// A `pattern`, or `nil` with a warning when it is valid ECMA-262 that PCRE2 cannot hold: a
    /// quantifier bound over 65,535 (Adyen's `^.{0,262144}$`). Any other failure is an error.
    func compilePattern(_ source: String, at location: SchemaLocation, orWarn: Bool) throws(ContractError) -> Pattern? {
        do {
            return try Pattern(source)
        } catch {
            guard orWarn, error.message.contains("too big in {} quantifier") else {
                throw self.error(location, "pattern \"\(source)\" does not compile: \(error)")
            }
            registry.warn(
                self.error(
                    location,
                    "pattern \"\(source)\" has a repetition bound over 65,535, more than the regular expression engine (PCRE2) holds: not checked"
                ))
            return nil
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
