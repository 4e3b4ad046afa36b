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
        // Implicit: each branch `$ref`'s last segment (`#/components/schemas/Dog` → "Dog").
        var refs: [String: Int] = [:]
        for (index, branch) in branchValues.enumerated() {
            guard let reference = branch["$ref"]?.string else { continue }
            let absolute = URIReference.resolve(reference, against: scope)
            refs[absolute] = index
            if let last = reference.split(separator: "/").last { branches[String(last)] = index }
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
            var schema: Value? = branch
            if let reference = branch["$ref"]?.string {
                schema = (try? registry.locate(reference, base: scope)).flatMap { registry.value(at: $0) }
            }
            guard let fixed = schema?["properties"]?[property] else { continue }
            let values = (fixed["enum"]?.items ?? []) + (fixed["const"].map { [$0] } ?? [])
            for case let .some(tag) in values.map(\.string) where branches[tag] == nil { branches[tag] = index }
        }
        node.discriminator = Schema.Discriminator(
            property: property, keyIndex: node.keys.index(of: property), branches: branches)
    }
}
