// OpenAPI's discriminator: which `oneOf`/`anyOf` branch each value of the named property picks.

extension SchemaCompiler {
    func readDiscriminator(
        _ node: Schema, _ discriminator: [(String, Value)], value: Value, scope: String, at location: SchemaLocation
    ) throws(ContractError) {
        guard let property = discriminator.first(where: { $0.0 == "propertyName" })?.1.string else {
            throw error(location, "discriminator needs a propertyName")
        }
        let branchesKey = node.oneOf.isEmpty ? "anyOf" : "oneOf"
        let branchValues = value[branchesKey]?.items ?? []
        var branches: [String: Int] = [:]
        // Implicit: the schema name of a branch that refers to one (`#/components/schemas/Dog`
        // → "Dog"; Swagger 2.0's `#/definitions/Dog`). A branch in a file of its own
        // (`./Dog.yaml`) has no name to give: only `mapping` names it.
        var refs: [String: Int] = [:]
        for (index, branch) in branchValues.enumerated() {
            guard let reference = branch["$ref"]?.string else { continue }
            let absolute = URIReference.resolve(reference, against: scope)
            refs[absolute] = index
            if let name = Self.schemaName(reference) { branches[name] = index }
        }
        if let mapping = discriminator.first(where: { $0.0 == "mapping" })?.1.members {
            for (tag, target) in mapping {
                guard let text = target.string else { continue }
                // A mapping value is a reference, or a schema name.
                let absolute = URIReference.resolve(
                    text.contains("/") || text.hasPrefix("#") ? text : "#/components/schemas/" + text, against: scope)
                if let index = refs[absolute] {
                    branches[tag] = index
                } else {
                    registry.warn(
                        error(
                            location,
                            "discriminator mapping \"\(tag)\" names \(text), which is not one of the \(branchesKey) branches"
                        ))
                }
            }
        }
        // A value no name gives picks the branch whose own schema fixes the property to it
        // (`type: {enum: [message]}`, `const: message`), as real descriptions without `mapping`
        // write it (OpenAI's): its violation then explains a failure, not the discriminator.
        for (index, branch) in branchValues.enumerated() {
            guard let fixed = resolved(branch, scope)?["properties"]?[property] else { continue }
            let values = (fixed["enum"]?.items ?? []) + (fixed["const"].map { [$0] } ?? [])
            for case let .some(tag) in values.map(\.string) where branches[tag] == nil { branches[tag] = index }
        }
        node.discriminator = Schema.Discriminator(
            property: property, keyIndex: node.keys.index(of: property), branches: branches)
        if branchesKey == "oneOf" { warnOverlapping(branchValues, property: property, scope: scope, at: location) }
    }

    /// `oneOf` branches under a discriminator that nothing tells apart: neither fixes the property
    /// (`enum`, `const`) and neither requires a property the other does not, so a body of the
    /// smaller one fits both and fails `oneOf` whatever the discriminator says (it does not change
    /// the outcome: OAS 3.1.1 §4.8.25 and 3.0.4). Said for the first such pair, at 20 places at most.
    private func warnOverlapping(_ branches: [Value], property: String, scope: String, at location: SchemaLocation) {
        struct Shape {
            var name: String
            var pinned = false
            var required: Set<String> = []
        }
        var open: [Shape] = []
        for (index, branch) in branches.enumerated() {
            var shape = Shape(name: branch["$ref"]?.string ?? "oneOf/\(index)")
            let own = resolved(branch, scope)
            // A branch that is a union of its own is not looked into.
            if let own, own["oneOf"] != nil || own["anyOf"] != nil { continue }
            // The branch, and the parts of its allOf (an heir of a base schema), one level down.
            for part in [branch] + (own?["allOf"]?.items ?? []) {
                guard let schema = resolved(part, scope) else { continue }
                if let fixed = schema["properties"]?[property].flatMap({ resolved($0, scope) }) {
                    // Fixed by itself, or by each of its alternatives (`anyOf: [{enum: [a]}, {type: "null"}]`).
                    let parts = [fixed] + ["anyOf", "oneOf", "allOf"].flatMap { fixed[$0]?.items ?? [] }
                    if parts.contains(where: { $0["enum"] != nil || $0["const"] != nil }) { shape.pinned = true }
                }
                shape.required.formUnion((schema["required"]?.items ?? []).compactMap(\.string))
            }
            if !shape.pinned { open.append(shape) }
        }
        for (first, one) in open.enumerated() {
            for other in open[(first + 1)...]
            where one.required.isSubset(of: other.required) || other.required.isSubset(of: one.required) {
                warnAtPlace(
                    &overlappingBranches, location,
                    "oneOf branches \(one.name) and \(other.name) are not told apart (neither fixes \(property) with enum or const, and one requires no property the other does not): a body that fits both fails oneOf, whatever \(property) says (a discriminator does not choose); fix \(property) in each branch, or use anyOf"
                )
                return
            }
        }
    }

    /// `value`, or the schema its `$ref` names (`nil` when that does not resolve).
    private func resolved(_ value: Value, _ scope: String) -> Value? {
        guard let reference = value["$ref"]?.string else { return value }
        return (try? registry.locate(reference, base: scope)).flatMap { registry.value(at: $0) }
    }

    /// The component name a reference ends in (`…#/components/schemas/Dog` or
    /// `…#/definitions/Dog` → "Dog", its JSON Pointer escapes undone), else `nil`.
    static func schemaName(_ reference: String) -> String? {
        guard let hash = reference.firstIndex(of: "#") else { return nil }
        let pointer = SchemaRegistry.percentDecode(String(reference[reference.index(after: hash)...]))
        let tokens = Value.tokens(of: pointer)
        let name: String? =
            switch tokens.count {
            case 3 where tokens[0] == "components" && tokens[1] == "schemas": tokens[2]
            case 2 where tokens[0] == "definitions": tokens[1]
            default: nil
            }
        return name?.isEmpty == false ? name : nil
    }
}
