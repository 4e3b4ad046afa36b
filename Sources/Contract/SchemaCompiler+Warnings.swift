// What the compiler says of a schema it reads leniently: unknown keywords, OpenAPI 3.0's
// keywords outside 3.0 and 3.1's inside it, and Swagger 2.0's leftovers.

extension SchemaCompiler {
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
        // Swagger 2.0's Items Object (a parameter's nested array): how its items are split.
        "collectionFormat",
    ]
    /// An unknown keyword is an annotation (JSON Schema says so); said once per name, with where.
    /// OpenAPI 3.0's `nullable: true` outside 3.0 is said once too: JSON Schema ignores it there,
    /// so `null` stays refused where a 3.0 reader would allow it.
    /// JSON Schema keywords that OpenAPI 3.0's Schema Object does not have: a 3.0 document
    /// that uses them (written for 3.1, say) would have them ignored without a word.
    static let notInOpenAPI30: Set<String> = [
        "const", "if", "then", "else", "contains", "minContains", "maxContains", "propertyNames",
        "dependentRequired", "dependentSchemas", "prefixItems", "unevaluatedProperties", "unevaluatedItems",
        "$defs", "definitions", "examples", "$anchor", "$dynamicRef", "$dynamicAnchor", "$id", "contentMediaType",
        "contentEncoding", "contentSchema",
    ]

    /// In a 3.0 schema: keywords 3.0 does not read, the 3.1 (numeric) form of an exclusive bound,
    /// and a `nullable` that cannot apply (OAS 3.0.3: only beside `type` in the same object, so
    /// not on a `$ref` or an `allOf` alone). Each said once; the verdicts follow 3.0.
    private func warnOutsideOpenAPI30(_ members: [(String, Value)], at location: SchemaLocation) {
        let version = readsSwagger2 ? "Swagger 2.0" : "OpenAPI 3.0"
        let nullWord = readsSwagger2 ? "x-nullable" : "nullable"
        var hasType = false
        var nullable = false
        var applies = false
        for (key, member) in members {
            switch key {
            case "type":
                hasType = true
                // 3.0.3 §4.7.24: type is one string, and not "null" (§4.4: use nullable).
                if member.items != nil, warnedKeywords.insert("3.0 type list").inserted {
                    registry.warn(
                        error(
                            location,
                            "type as a list is OpenAPI 3.1's form; \(version) takes one type (with \(nullWord) for null): read as 3.1 reads it (said once)"
                        ))
                } else if member.string == "null", warnedKeywords.insert("3.0 type null").inserted {
                    registry.warn(
                        error(
                            location,
                            "type: \"null\" is not a type of \(version) (it writes \(nullWord): true): read as 3.1 reads it (said once)"
                        ))
                }
            case "$ref", "allOf", "oneOf", "anyOf": applies = true
            case "nullable": nullable = member.bool == true
            case "exclusiveMinimum", "exclusiveMaximum":
                guard member.bool == nil, warnedKeywords.insert("3.1 \(key)").inserted else { continue }
                registry.warn(
                    error(
                        location,
                        "\(key) with a number is OpenAPI 3.1's form; in \(version) it is a boolean beside minimum/maximum: ignored (said once)"
                    ))
            case let name where Self.notInOpenAPI30.contains(name):
                guard warnedKeywords.insert("3.1 \(key)").inserted else { continue }
                registry.warn(
                    error(
                        location,
                        "\(key) is not a keyword of \(version)'s Schema Object (3.1 has it): ignored (said once)"))
            default: continue
            }
        }
        if nullable, !hasType, applies {
            warnAtPlace(
                &nullableWithoutType, location,
                "nullable without type in the same schema has no effect in OpenAPI 3.0 (3.0.3): null still fails its $ref, allOf, oneOf or anyOf; write the type beside it"
            )
        }
    }

    /// Keywords that say nothing of a value's validity: beside a `$ref` they hide nothing.
    private static let annotations: Set<String> = [
        "$ref", "$schema", "$id", "id", "$comment", "$defs", "definitions", "title", "description", "default",
        "deprecated", "readOnly", "writeOnly", "examples", "example", "externalDocs", "xml", "discriminator",
        // Said on its own (``warnOutsideOpenAPI30``).
        "nullable",
    ]

    func warnUnknownKeywords(_ value: Value, at location: SchemaLocation, dialect: Dialect) {
        guard let members = value.members else { return }
        // OpenAPI 3.0's Reference Object and JSON Schema before 2019-09: a `$ref` makes its
        // siblings ignored (3.1 and 2019-09 read them); constraints written there check nothing.
        if dialect.refOverridesSiblings, value["$ref"] != nil {
            let hidden = members.map(\.0).filter {
                !Self.annotations.contains($0) && !$0.hasPrefix("x-") && Self.knownKeywords.contains($0)
            }
            if !hidden.isEmpty {
                warnAtPlace(
                    &hiddenBesideRef, location,
                    "\(hidden.joined(separator: ", ")) beside $ref \(hidden.count == 1 ? "is" : "are") ignored in \(dialect == .openAPI30 ? "OpenAPI 3.0 (and 2.0)" : "this JSON Schema draft") (3.1 and 2019-09 read them): nothing checks \(hidden.count == 1 ? "it" : "them"); write allOf: [{$ref: …}, {…}]"
                )
            }
        }
        for (key, _) in members
        where !Self.knownKeywords.contains(key) && !key.hasPrefix("x-") && !warnedKeywords.contains(key) {
            warnedKeywords.insert(key)
            registry.warn(error(location, "unknown keyword \"\(key)\" (ignored; said once)"))
        }
        if dialect == .openAPI30 { warnOutsideOpenAPI30(members, at: location) }
        warnSlightlyOff(value, at: location)
        // Swagger 2.0's discriminator names a property: read in the description's own
        // `definitions` (``Swagger2Polymorphism``), not elsewhere (an inline schema, another file).
        if dialect == .openAPI30, value["discriminator"]?.string != nil,
            warnedKeywords.insert("discriminator as a name").inserted
        {
            registry.warn(
                error(
                    location,
                    "a Swagger 2.0 discriminator outside the description's own definitions is not used: a value is checked against the schema it is given, not the subtype its discriminator names (said once)"
                ))
        }
        // Read as a base URI before; OpenAPI 3.0's (and 2.0's) Schema Object has no such keyword.
        if dialect == .openAPI30, value["id"]?.string != nil, warnedKeywords.insert("id as a base").inserted {
            registry.warn(
                error(
                    location,
                    "id is no keyword of OpenAPI 3.0's (or 2.0's) Schema Object, not a base URI: $refs beside it resolve against the document (said once)"
                ))
        }
        // 2019-09's recursion keywords where 2020-12 (or OpenAPI 3.1) reads the schema: ignored,
        // so the branch they stand for accepts anything.
        for key in ["$recursiveRef", "$recursiveAnchor"]
        where dialect == .draft2020 && value[key] != nil && warnedKeywords.insert(key).inserted {
            registry.warn(
                error(
                    location,
                    "\(key) is JSON Schema 2019-09's; this dialect has \(key == "$recursiveRef" ? "$dynamicRef" : "$dynamicAnchor"): ignored"
                        + (key == "$recursiveRef" ? ", what it names is not checked" : "") + " (said once)"))
        }
        if dialect != .openAPI30, value["nullable"]?.bool == true {
            warnAtPlace(
                &ignoredNullable, location,
                "nullable is OpenAPI 3.0's: JSON Schema ignores it (null passes where type lists \"null\", as in type: [\(value["type"]?.string ?? "string"), \"null\"])"
            )
        }
    }

    /// What a validator of the document (openapi-spec-validator) refuses and the verdicts do not
    /// need: a name `required` twice (its items MUST be unique: JSON Schema 2020-12 §6.5.3,
    /// draft 4 §5.4.3), a `default` of a type `type` does not allow (it SHOULD validate, §9.2;
    /// but `null`, which many descriptions write for "none").
    private func warnSlightlyOff(_ value: Value, at location: SchemaLocation) {
        if let names = value["required"]?.items, names.count > 1 {
            var seen: Set<String> = []
            let repeated = names.compactMap(\.string).filter { !seen.insert($0).inserted }
            if let first = repeated.first {
                warnAtPlace(
                    &repeatedRequired, location,
                    "required names \"\(first)\" more than once (its names must be unique): read once")
            }
        }
        guard let fallback = value["default"], let declared = value["type"] else { return }
        let types = declared.items?.compactMap(\.string) ?? declared.string.map { [$0] } ?? []
        guard !types.isEmpty else { return }
        let found = fallback.typeName
        let fits = types.contains { type in
            type == found || (type == "number" && found == "integer")
                || (type == "integer" && fallback.number.map(\.isInteger) == true)
        }
        // `default: null` is how many descriptions write "no default": not said.
        if fits || found == "null" { return }
        let what = (["integer", "array", "object"].contains(found) ? "an " : "a ") + found
        warnAtPlace(
            &defaultOfOtherType, location,
            "default is \(what), not of type \(types.joined(separator: " or ")) (a default should be a valid value): nothing checks it"
        )
    }

    /// A warning said at each place, up to 20 (`said` counts them): for what is fixed one place
    /// at a time, each a schema where a value fails, which "said once" would leave unnamed.
    func warnAtPlace(_ said: inout Int, _ location: SchemaLocation, _ message: String) {
        said += 1
        guard said <= 20 else { return }
        registry.warn(error(location, message + (said == 20 ? " (20 places said; any others are not)" : "")))
    }
}
