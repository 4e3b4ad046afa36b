// Swagger 2.0's polymorphism. A 2.0 Schema Object has no `oneOf` or `anyOf`: a definition's
// `discriminator` names a property whose value "MUST be the name of this schema or any schema that
// inherits it" (a definition whose `allOf` lists it), and the value says which of them the object
// is. Read here as OpenAPI 3's form of the same thing, so the validator needs nothing of its own:
// each `$ref` to such a definition (but an heir's own `allOf` reference to it) is pointed at a
// schema made beside it, `x-sluice-discriminated`, which applies the definition and one branch per
// name the value may have (the definition itself, or an heir fixed to its name and applied whole),
// with a 3.x `discriminator` to explain a failure by the branch the value names.

/// The description's own `definitions` with their discriminators made into branches.
enum Swagger2Polymorphism {
    /// The member of a discriminating definition that holds the schema its references go to.
    static let member = "x-sluice-discriminated"

    /// `root` with every discriminating definition of its own `definitions` that has heirs there
    /// read as described above; warnings by pointer for what cannot be. `nil` when nothing changes.
    static func rewrite(_ root: Value) -> (root: Value, warnings: [(pointer: String, message: String)])? {
        guard let definitions = root["definitions"]?.members else { return nil }
        var warnings: [(pointer: String, message: String)] = []
        let names = Set(definitions.map(\.0))
        // Each definition's parents: the definitions its own `allOf` references.
        var parents: [String: [String]] = [:]
        for (name, schema) in definitions {
            parents[name] = (schema["allOf"]?.items ?? []).compactMap { item in
                item["$ref"]?.string.flatMap(definitionName).flatMap { names.contains($0) ? $0 : nil }
            }
        }
        func inherits(_ name: String, from ancestor: String) -> Bool {
            var seen: Set<String> = [name]
            var pending = parents[name] ?? []
            while let next = pending.popLast() {
                if next == ancestor { return true }
                if seen.insert(next).inserted { pending += parents[next] ?? [] }
            }
            return false
        }
        let schemas = Dictionary(definitions, uniquingKeysWith: { first, _ in first })
        // The definitions whose discriminator is read: a property name, and heirs to name.
        var discriminating: Set<String> = []
        for (name, schema) in definitions {
            guard let property = schema["discriminator"]?.string else { continue }
            let pointer = "/definitions/" + Value.escape(name) + "/discriminator"
            guard definitions.contains(where: { $0.0 != name && inherits($0.0, from: name) }) else {
                warnings.append(
                    (
                        pointer,
                        "discriminator \(property): no definition here inherits \(name) (lists it in its allOf), so its value is not checked"
                    ))
                continue
            }
            discriminating.insert(name)
            if !(schema["required"]?.items ?? []).contains(where: { $0.string == property }) {
                warnings.append(
                    (
                        pointer,
                        "discriminator \(property) is not in required (Swagger 2.0 says it must be): an object without it is checked as \(name) only"
                    ))
            }
        }
        // The discriminating definitions nearest above `name` on each line of its parents.
        func nearestDiscriminating(above name: String) -> Set<String> {
            var found: Set<String> = []
            var seen: Set<String> = [name]
            var pending = parents[name] ?? []
            while let next = pending.popLast() {
                guard seen.insert(next).inserted else { continue }
                if discriminating.contains(next) { found.insert(next) } else { pending += parents[next] ?? [] }
            }
            return found
        }
        // The values of `ancestor`'s property that an object of `name` may carry: its name (any
        // heir's, as the specification says), and its `x-ms-discriminator-value` when that is for
        // this property (AutoRest gives it for the nearest discriminator above; a value for a
        // nearer one carries that one's values here).
        // (`visited`: definitions whose `allOf`s list one another in a loop end the walk.)
        func tags(_ name: String, for ancestor: String, visited: Set<String> = []) -> [String] {
            var found = [name]
            guard !visited.contains(name) else { return found }
            for nearest in nearestDiscriminating(above: name)
            where nearest == ancestor || inherits(nearest, from: ancestor) {
                if nearest == ancestor {
                    if let value = schemas[name]?["x-ms-discriminator-value"]?.string { found.append(value) }
                } else {
                    found += tags(nearest, for: ancestor, visited: visited.union([name]))
                }
            }
            return found
        }
        // Each discriminating definition's made schema: the definition, and one branch per
        // definition that may be named: itself; each heir whose nearest discriminating definition
        // it is (a discriminating heir's branch is that heir's made schema, whose own branches
        // take its heirs, which this branch's values name too).
        var dispatch: [String: Value] = [:]
        for name in discriminating {
            let property = schemas[name]!["discriminator"]!.string!
            func fixed(_ values: [String]) -> Value {
                var unique: [String] = []
                for value in values where !unique.contains(value) { unique.append(value) }
                return .object([(property, .object([("enum", .array(unique.map(Value.string)))]))])
            }
            let own = [name] + (schemas[name]?["x-ms-discriminator-value"]?.string.map { [$0] } ?? [])
            var branches: [Value] = [.object([("properties", fixed(own))])]
            for (heir, _) in definitions where nearestDiscriminating(above: heir).contains(name) {
                var values = tags(heir, for: name)
                var reference = "#/definitions/" + Value.escape(heir)
                if discriminating.contains(heir) {
                    values += definitions.map(\.0).filter { inherits($0, from: heir) }
                    reference += "/" + member
                }
                branches.append(
                    .object([
                        ("properties", fixed(values)),
                        ("allOf", .array([.object([("$ref", .string(reference))])])),
                    ]))
            }
            dispatch[name] = .object([
                ("allOf", .array([.object([("$ref", .string("#/definitions/" + Value.escape(name)))])])),
                ("anyOf", .array(branches)),
                ("discriminator", .object([("propertyName", .string(property))])),
            ])
        }
        guard !warnings.isEmpty || !dispatch.isEmpty else { return nil }
        var rewritten = dispatch.isEmpty ? root : redirect(root, dispatching: dispatch, depth: 0)
        // The made schemas go in after the references are redirected (theirs stay as they are).
        guard case .object(var members) = rewritten,
            let index = members.firstIndex(where: { $0.0 == "definitions" }),
            case .object(var definitionMembers) = members[index].1
        else { return nil }
        for position in definitionMembers.indices {
            let name = definitionMembers[position].0
            guard case .object(var schema) = definitionMembers[position].1,
                schema.contains(where: { $0.0 == "discriminator" && $0.1.string != nil })
            else { continue }
            // The property name has become the made schema's discriminator (or was said unused).
            schema.removeAll { $0.0 == "discriminator" }
            if let made = dispatch[name] { schema.append((member, made)) }
            definitionMembers[position].1 = .object(schema)
        }
        members[index].1 = .object(definitionMembers)
        rewritten = .object(members)
        return (rewritten, warnings)
    }

    /// The definition a reference names in this document (`#/definitions/Name`), else `nil`.
    static func definitionName(_ reference: String) -> String? {
        let prefix = "#/definitions/"
        guard reference.hasPrefix(prefix) else { return nil }
        let token = SchemaRegistry.percentDecode(String(reference.dropFirst(prefix.count)))
        guard !token.contains("/") else { return nil }
        return token.replacingOccurrences("~1", "/").replacingOccurrences("~0", "~")
    }

    /// Members whose keys are names, not keywords.
    private static let nameMaps: Set<String> = [
        "properties", "patternProperties", "definitions", "parameters", "responses", "headers", "paths",
        "securityDefinitions",
    ]

    /// `value` with each reference to a discriminating definition pointed at its made schema,
    /// but those that are items of a definition's own `allOf` (an heir naming its parent).
    /// `depth`: 0 the document, 1 its `definitions`, 2 a definition, 3 a definition's `allOf`,
    /// -1 anywhere else. Examples and extensions are data, not schemas: left as they are.
    private static func redirect(
        _ value: Value, dispatching dispatch: [String: Value], depth: Int, names: Bool = false
    ) -> Value {
        switch value {
        case .object(let members):
            var changed = members
            for index in changed.indices {
                let (key, child) = changed[index]
                if key == "$ref", let text = child.string, let name = definitionName(text), dispatch[name] != nil {
                    changed[index].1 = .string(text + "/" + member)
                    continue
                }
                let next =
                    depth == 0 && key == "definitions" ? 1 : depth == 1 ? 2 : depth == 2 && key == "allOf" ? 3 : -1
                // (In a map of names, `example` or `x-id` is a name: a property, a header so called.)
                if !names, key == "example" || key == "examples" || key.hasPrefix("x-") { continue }
                changed[index].1 = redirect(
                    child, dispatching: dispatch, depth: next, names: next == 1 || !names && nameMaps.contains(key))
            }
            return .object(changed)
        case .array(let items):
            return .array(
                items.map { item in
                    // An item of a definition's `allOf` keeps its reference; what is beside it does not.
                    guard depth == 3, case .object(var members) = item else {
                        return redirect(item, dispatching: dispatch, depth: -1)
                    }
                    for index in members.indices where members[index].0 != "$ref" {
                        members[index].1 = redirect(members[index].1, dispatching: dispatch, depth: -1)
                    }
                    return .object(members)
                })
        default:
            return value
        }
    }
}
