import Regexp

// The end of a value: its group folded in reverse, each slot's checks, each result handed to its parent.

extension Engine {
    // MARK: - Folding

    enum Kind {
        case scalar(Token)
        case container(object: Bool, count: Int, value: Value?, tooLarge: Bool)
    }

    struct Outcome {
        var valid = true
        var violation: Violation?
    }

    mutating func fold(_ start: Int, _ end: Int, _ kind: Kind, depth: Int) {
        var index = end - 1
        while index >= start {
            finishSlot(index, kind, depth: depth)
            let parent = Int(slots[index].parent)
            if parent >= 0 {
                let token: Token? = if case .scalar(let token) = kind { token } else { nil }
                deliver(
                    valid: slots[index].valid, violation: slots[index].violation, extra: slots[index].extra,
                    role: slots[index].role, branch: Int(slots[index].branch), to: parent, token: token, depth: depth)
            }
            index -= 1
        }
    }

    /// A child's result, handed to its parent.
    mutating func deliver(
        valid: Bool, violation: Violation?, extra childExtra: SlotExtra?, role: Role, branch: Int, to parent: Int,
        token: Token?, depth: Int
    ) {
        switch role {
        case .root: break
        case .allOf, .property, .item:
            if !valid {
                slots[parent].valid = false
                if !slots[parent].reporting, slots[parent].violation == nil { slots[parent].violation = violation }
            }
        case .anyOf:
            if valid {
                slots[parent].anyOfValid += 1
            } else {
                branchFailed(parent, branch, violation, oneOf: false, depth: depth)
            }
        case .oneOf:
            if valid {
                if slots[parent].oneOfValid == 0 {
                    slots[parent].firstOneOfMatch = Int32(branch)
                } else {
                    let kept = extra(parent)
                    if kept.oneOfMatches.isEmpty { kept.oneOfMatches.append(Int(slots[parent].firstOneOfMatch)) }
                    kept.oneOfMatches.append(branch)
                }
                slots[parent].oneOfValid += 1
            } else {
                branchFailed(parent, branch, violation, oneOf: true, depth: depth)
            }
        case .not:
            if valid { slots[parent].results |= Self.notValid }
        case .ifCondition:
            if valid { slots[parent].results |= Self.ifValid }
        case .then, .otherwise:
            // Which branch applies is known only when the parent finishes: keep both sides.
            let then = role == .then
            if valid {
                slots[parent].results |= then ? Self.thenValid : Self.elseValid
                if let childExtra, slots[parent].collects {
                    extra(parent).dependentAnnotations[then ? -1 : -2] = childExtra
                }
            } else {
                extra(parent).branchViolations[then ? -1 : -2] = violation
            }
            return
        case .dependent:
            if valid {
                if branch < 64 { slots[parent].dependentValid |= 1 << UInt64(branch) }
                if let childExtra, slots[parent].collects { extra(parent).dependentAnnotations[branch] = childExtra }
            } else {
                extra(parent).branchViolations[1000 + branch] = violation
            }
            return
        case .contains:
            if valid {
                slots[parent].containsCount += 1
                if slots[parent].collects || slots[parent].schema.unevaluatedItems != nil {
                    extra(parent).indices.insert(branch)
                }
            }
        case .unevaluatedProperty:
            extra(parent).pendingKeys[branch].1 = valid
            extra(parent).pendingKeys[branch].2 = violation
        case .unevaluatedItem:
            extra(parent).pendingItems[branch].1 = valid
            extra(parent).pendingItems[branch].2 = violation
        case .propertyName:
            if !valid {
                let name = token.map(\.text) ?? ""
                fail(parent, "propertyNames", "names that match the propertyNames schema", "\"\(name)\"", depth: depth)
            }
        }
        // Annotations of valid in-place children count as evaluated for the parent.
        if valid, role.inPlace, role != .not, slots[parent].collects, let childExtra {
            extra(parent).absorb(childExtra)
        }
    }

    mutating func finishSlot(_ index: Int, _ kind: Kind, depth: Int) {
        unowned(unsafe) let schema = slots[index].schema
        if let constant = schema.constant {
            if !constant {
                let found: String =
                    switch kind {
                    case .scalar(let token): Self.describe(token)
                    case .container(let object, _, _, _): object ? "an object" : "an array"
                    }
                fail(index, "false", "nothing (the schema is false)", found, depth: depth)
            }
            return
        }
        if !slots[index].valid && !slots[index].reporting { return }
        switch kind {
        case .scalar(let token):
            var outcome = Outcome()
            scalarChecks(schema, token, reporting: slots[index].reporting, depth: depth, into: &outcome)
            if !outcome.valid {
                slots[index].valid = false
                if slots[index].violation == nil { slots[index].violation = outcome.violation }
            }
        case .container(let object, let count, let value, let tooLarge):
            if slots[index].active {
                if object {
                    objectEnd(index, count: count, depth: depth)
                } else {
                    arrayEnd(index, count: count, depth: depth)
                }
            }
            if let values = schema.enumValues {
                if let value {
                    if !values.contains(value) {
                        fail(index, "enum", "one of \(Self.list(values))", Self.short(value.json), depth: depth)
                    }
                } else if tooLarge {
                    verdict.notes.append(
                        "enum at \(pointer(depth)) not checked: the value is larger than \(options.maxKept) bytes")
                } else {
                    fail(index, "enum", "one of \(Self.list(values))", object ? "an object" : "an array", depth: depth)
                }
            }
            if let constant = schema.constValue {
                if let value {
                    if value != constant {
                        fail(index, "const", Self.short(constant.json), Self.short(value.json), depth: depth)
                    }
                } else if tooLarge {
                    verdict.notes.append(
                        "const at \(pointer(depth)) not checked: the value is larger than \(options.maxKept) bytes")
                } else {
                    fail(index, "const", Self.short(constant.json), object ? "an object" : "an array", depth: depth)
                }
            }
        }
        guard schema.hasInPlace || schema.hasUnevaluated else { return }
        let slot = slots[index]
        // A discriminator never changes the verdict (OAS 3.1.1 and 3.0.4, Discriminator Object):
        // when no branch matched, it only says which branch's violation explains it.
        if !schema.anyOf.isEmpty, slot.anyOfValid == 0 {
            if let discriminator = schema.discriminator, let tag = slot.extra?.tag {
                discriminated(index, discriminator, tag: tag, keyword: "anyOf", depth: depth)
            } else {
                fail(
                    index, "anyOf", "at least one of \(schema.anyOf.count) schemas", "none matched" + closest(index),
                    depth: depth)
            }
        }
        if !schema.oneOf.isEmpty, slot.oneOfValid != 1 {
            if slot.oneOfValid == 0, let discriminator = schema.discriminator, let tag = slot.extra?.tag {
                discriminated(index, discriminator, tag: tag, keyword: "oneOf", depth: depth)
            } else {
                fail(
                    index, "oneOf", "exactly one of \(schema.oneOf.count) schemas",
                    slot.oneOfValid == 0 ? "none matched" + closest(index) : matchedSeveral(index),
                    depth: depth)
            }
        }
        // A reporting slot's `violation` held the closest branch (``keepClosest(_:_:)``), which
        // nothing reads after this (its own violations are recorded as they come).
        if slot.reporting, slots[index].violation != nil { slots[index].violation = nil }
        if schema.not != nil, slot.results & Self.notValid != 0 {
            fail(index, "not", "a value the not schema rejects", "one it accepts", depth: depth)
        }
        if schema.ifSchema != nil {
            let then = slot.results & Self.ifValid != 0
            if then ? schema.thenSchema != nil : schema.elseSchema != nil {
                if slot.results & (then ? Self.thenValid : Self.elseValid) == 0 {
                    fail(
                        index, with: slots[index].extra?.branchViolations[then ? -1 : -2] ?? nil,
                        otherwise: then ? "then" : "else", depth: depth)
                } else if let annotations = slots[index].extra?.dependentAnnotations[then ? -1 : -2] {
                    extra(index).absorb(annotations)
                }
            }
        }
        if !schema.dependentSchemas.isEmpty, case .container(true, _, _, _) = kind {
            for (position, dependent) in schema.dependentSchemas.enumerated() where seen(index, dependent.0) {
                if position < 64, slot.dependentValid & (1 << UInt64(position)) != 0 {
                    if let annotations = slots[index].extra?.dependentAnnotations[position] {
                        extra(index).absorb(annotations)
                    }
                } else {
                    fail(
                        index, with: slots[index].extra?.branchViolations[1000 + position] ?? nil,
                        otherwise: "dependentSchemas", depth: depth)
                }
            }
        }
        if case .container(let object, _, _, _) = kind, slots[index].active, let extra = slots[index].extra {
            if object, schema.unevaluatedProperties != nil {
                for (name, valid, violation) in extra.pendingKeys
                where !valid && !extra.allKeys && !extra.keys.contains(name) {
                    if violation == nil || violation?.keyword == "false" {
                        fail(
                            index,
                            with: Violation(
                                pointer: pointer(depth) + "/" + Value.escape(name), keyword: "unevaluatedProperties",
                                expected: "no properties the schema does not evaluate", found: "\"\(name)\"",
                                schema: schema.location), otherwise: "unevaluatedProperties", depth: depth)
                    } else {
                        fail(index, with: violation, otherwise: "unevaluatedProperties", depth: depth)
                    }
                }
            }
            if !object, schema.unevaluatedItems != nil {
                for (position, valid, violation) in extra.pendingItems
                where !valid && !extra.allItems && position >= extra.prefix && !extra.indices.contains(position) {
                    fail(index, with: violation, otherwise: "unevaluatedItems", depth: depth)
                }
            }
        }
    }

    /// The keyword and expectation of a `readOnly` property sent in a request (`writeOnly` in a
    /// response), where the dialect says it breaks the contract (``Schema/rejectsAccess``).
    static func accessViolation(_ name: String, direction: Direction) -> (keyword: String, expected: String) {
        direction == .request
            ? ("readOnly", "no property \"\(name)\" in a request (readOnly)")
            : ("writeOnly", "no property \"\(name)\" in a response (writeOnly)")
    }

    /// The location of `schema`'s property `key` (where its schema is written, `readOnly` with
    /// it), or the object's `…/properties/NAME` when it has no schema of its own.
    static func propertyLocation(_ schema: Schema, _ key: Int) -> String {
        if key < schema.propertySchemas.count, let property = schema.propertySchemas[key] { return property.location }
        return schema.location + "/properties/" + Value.escape(schema.keys.names[key])
    }

    /// More than one `oneOf` branch matched: which (by the schema each names), and the one a
    /// discriminator's value names (it does not change the verdict: OAS 3.1.1 §4.8.25, so
    /// branches that do not exclude each other fail a body that fits both).
    func matchedSeveral(_ index: Int) -> String {
        let schema = slots[index].schema
        let matches = slots[index].extra?.oneOfMatches ?? []
        func name(_ branch: Int) -> String {
            let node = schema.oneOf[branch]
            return node.ref?.location ?? node.location
        }
        var text = "\(slots[index].oneOfValid) matched"
        guard !matches.isEmpty else { return text }
        text += ": " + matches.sorted().map(name).joined(separator: ", ")
        if let discriminator = schema.discriminator, let tag = slots[index].extra?.tag,
            let named = discriminator.branches[tag]
        {
            text += " (\(discriminator.property) \"\(tag)\" names \(name(named)); a discriminator does not choose)"
        }
        return text
    }

    /// No branch matched: the violation of the branch the discriminator's value names, or, for a
    /// value that names none, the values that would.
    mutating func discriminated(
        _ index: Int, _ discriminator: Schema.Discriminator, tag: String, keyword: String, depth: Int
    ) {
        guard let branch = discriminator.branches[tag] else {
            fail(
                index, "discriminator",
                "\(discriminator.property) one of \(discriminator.branches.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", "))",
                "\"\(tag)\"", depth: depth)
            return
        }
        fail(index, with: slots[index].extra?.branchViolations[branch] ?? nil, otherwise: keyword, depth: depth)
    }

    func seen(_ index: Int, _ key: Int) -> Bool {
        key < 64 ? slots[index].seen & (1 << UInt64(key)) != 0 : slots[index].extra?.seenBeyond.contains(key) == true
    }

    mutating func objectEnd(_ index: Int, count: Int, depth: Int) {
        unowned(unsafe) let schema = slots[index].schema
        if let minimum = schema.minProperties, count < minimum {
            fail(index, "minProperties", "at least \(minimum) properties", "\(count)", depth: depth)
        }
        if let maximum = schema.maxProperties, count > maximum {
            fail(index, "maxProperties", "at most \(maximum) properties", "\(count)", depth: depth)
        }
        let lifted = options.direction == .request ? schema.readOnlyMask : schema.writeOnlyMask
        let missing = schema.requiredMask & ~lifted & ~slots[index].seen
        if missing != 0 {
            var bits = missing
            while bits != 0 {
                let key = bits.trailingZeroBitCount
                bits &= bits - 1
                fail(index, "required", "property \"\(schema.keys.names[key])\"", "absent", depth: depth)
            }
        }
        if schema.rejectsAccess {
            var sent =
                (options.direction == .request ? schema.readOnlyMask : schema.writeOnlyMask) & slots[index].seen
            while sent != 0 {
                let key = sent.trailingZeroBitCount
                sent &= sent - 1
                let (keyword, expected) = Self.accessViolation(schema.keys.names[key], direction: options.direction)
                // Located at the property that says readOnly (writeOnly), not its object.
                fail(index, keyword, expected, "present", depth: depth, at: Self.propertyLocation(schema, key))
            }
        }
        for key in schema.requiredBeyond where !seen(index, key) {
            fail(index, "required", "property \"\(schema.keys.names[key])\"", "absent", depth: depth)
        }
        for (trigger, needed) in schema.dependentRequired where seen(index, trigger) {
            for key in needed where !seen(index, key) {
                fail(
                    index, "dependentRequired",
                    "property \"\(schema.keys.names[key])\" (with \"\(schema.keys.names[trigger])\")", "absent",
                    depth: depth)
            }
        }
    }

    mutating func arrayEnd(_ index: Int, count: Int, depth: Int) {
        unowned(unsafe) let schema = slots[index].schema
        if let minimum = schema.minItems, count < minimum {
            fail(index, "minItems", "at least \(minimum) items", "\(count)", depth: depth)
        }
        if let maximum = schema.maxItems, count > maximum {
            fail(index, "maxItems", "at most \(maximum) items", "\(count)", depth: depth)
        }
        if schema.contains != nil {
            let matched = Int(slots[index].containsCount)
            if matched < schema.minContains {
                fail(
                    index, schema.minContains == 1 ? "contains" : "minContains",
                    "at least \(schema.minContains) items matching contains", "\(matched)", depth: depth)
            }
            if let maximum = schema.maxContains, matched > maximum {
                fail(index, "maxContains", "at most \(maximum) items matching contains", "\(matched)", depth: depth)
            }
        }
        if schema.uniqueItems, slots[index].extra?.uniqueTooLarge == true {
            verdict.notes.append("uniqueItems at \(pointer(depth)) not checked past \(options.maxKept) bytes of items")
        }
    }

    /// An item of the array on top is complete: `uniqueItems`.
    mutating func itemValue(_ value: Value, top: Int) {
        for index in frames[top].start..<frames[top].end where slots[index].schema.uniqueItems && slots[index].active {
            let extra = extra(index)
            guard !extra.uniqueTooLarge else { continue }
            extra.uniqueBytes += 16
            if case .string(let text) = value { extra.uniqueBytes += text.utf8.count }
            if extra.uniqueBytes > options.maxKept {
                extra.uniqueTooLarge = true
                extra.unique = [:]
                continue
            }
            if let first = extra.unique[value] {
                fail(
                    index, "uniqueItems", "no two equal items",
                    "items \(first) and \(frames[top].count - 1) are equal", depth: top)
            } else {
                extra.unique[value] = frames[top].count - 1
            }
        }
    }

    mutating func extra(_ index: Int) -> SlotExtra {
        if let extra = slots[index].extra { return extra }
        let extra = SlotExtra()
        slots[index].extra = extra
        return extra
    }
}
