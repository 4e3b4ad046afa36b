import Regexp

// The tokens' side: containers open and close, member names and items get their child slots,
// scalars are checked at once.

extension Engine {
    // MARK: - Tokens

    mutating func malformed(_ message: String, at offset: Int, atObjectLevel: Bool) {
        record(
            Violation(
                // Bytes that fail inside an array are the item that was to come next; between
                // an object's members, the object.
                pointer: atObjectLevel
                    ? path.pointer(frames, depth: frames.count - 1)
                    : path.pointer(frames, depth: frames.count, nextItem: true), keyword: "json",
                expected: "JSON text",
                found: "\(message) at byte \(offset)",
                schema: ""))
        stopped = true
    }

    mutating func beginObject() -> Bool { begin(object: true) }
    mutating func beginArray() -> Bool { begin(object: false) }

    mutating func begin(object: Bool) -> Bool {
        let depth = frames.count
        guard depth < options.maxDepth else {
            record(
                Violation(
                    pointer: pointer(depth), keyword: "max-depth", expected: "nesting of at most \(options.maxDepth)",
                    found: "deeper", schema: ""))
            stopped = true
            return false
        }
        let start: Int
        if depth == 0 {
            start = 0
            push(root, parent: -1, role: .root, branch: 0, reporting: true, collects: false, scope: 0)
        } else {
            start = frames[depth - 1].end
            if !frames[depth - 1].isObject { itemChildren() }
            materialize()
        }
        let end = slots.count
        var frame = Frame(start: start, end: end, isObject: object, keyStart: path.count, keyEnd: path.count)
        var needsValue = depth > 0 && frames[depth - 1].unique
        for index in start..<end {
            unowned(unsafe) let schema = slots[index].schema
            if schema.needsWholeValue { needsValue = true }
            if schema.constant != nil { continue }
            let type: Schema.Types = object ? .object : .array
            if !schema.types.contains(type) {
                fail(index, "type", Self.typeList(schema.types), object ? "object" : "array", depth: depth)
                slots[index].active = false
                continue
            }
            if object {
                if schema.propertyNames != nil { frame.propertyNames = true }
                if slots[index].collects && (schema.additionalProperties != nil || schema.unevaluatedProperties != nil)
                {
                    extra(index).exportAll = true
                    if schema.additionalProperties != nil { extra(index).allKeys = true }
                }
            } else {
                if schema.uniqueItems { frame.unique = true }
                if slots[index].collects {
                    let extra = extra(index)
                    extra.prefix = max(extra.prefix, schema.prefixItems.count)
                    if schema.items != nil { extra.allItems = true }
                    if schema.unevaluatedItems != nil { extra.exportAll = true }
                }
            }
        }
        frames.append(frame)
        if needsValue || capture.active { capture.begin(object: object, depth: depth, limit: options.maxKept) }
        return true
    }

    mutating func key(_ token: Token) -> Bool {
        if capture.active { capture.key(token) }
        let top = frames.count - 1
        frames[top].count += 1
        path.replace(from: frames[top].keyStart, with: token.bytes)
        frames[top].keyEnd = path.count
        if !watches.isEmpty { watches.removeAll(keepingCapacity: true) }
        let start = frames[top].start
        let end = frames[top].end
        if start == end { return true }
        if frames[top].propertyNames {
            for index in start..<end where slots[index].active {
                guard let names = slots[index].schema.propertyNames else { continue }
                let mark = slots.count
                push(
                    names, parent: index, role: .propertyName, branch: 0, reporting: false, collects: false,
                    scope: slots[index].scope)
                fold(mark, slots.count, .scalar(token), depth: frames.count)
                slots.truncate(to: mark)
            }
        }
        if end - start == 1, slots[start].active, !slots[start].collects, slots[start].schema.plainObject,
            slots[start].schema.hasObjectChecks
        {
            return plainMember(start, token)
        }
        for index in start..<end where slots[index].active {
            unowned(unsafe) let schema = slots[index].schema
            guard schema.hasObjectChecks else { continue }
            var matched = false
            let last = Int(slots[index].lastKey)
            var known: Int?
            if last + 1 < schema.keys.count, schema.keys.matches(last + 1, token.bytes) {
                known = last + 1
            } else {
                known = schema.keys.lookup(token.bytes)
            }
            if let known {
                slots[index].lastKey = Int32(known)
                if known < 64 {
                    let bit: UInt64 = 1 << UInt64(known)
                    if slots[index].seen & bit != 0 {
                        fail(
                            index, "duplicate-key", "each member name once", "\"\(token.text)\" again",
                            depth: frames.count)
                    }
                    slots[index].seen |= bit
                } else {
                    extra(index).seenBeyond.insert(known)
                }
                if let property = schema.propertySchemas[known] {
                    matched = true
                    addChild(property, parent: index, role: .property, branch: known)
                }
                if let discriminator = schema.discriminator, discriminator.keyIndex == known { watches.append(index) }
            }
            if !schema.patternProperties.isEmpty {
                for (pattern, sub) in schema.patternProperties {
                    switch pattern.search(token.bytes) {
                    case .match:
                        matched = true
                        addChild(sub, parent: index, role: .property, branch: -1)
                    case .noMatch, .invalidSubject: break
                    case .limitExceeded:
                        fail(
                            index, "patternProperties", "a pattern that finishes (\(pattern.source))",
                            "the match limit was reached", depth: frames.count)
                    }
                }
            }
            if !matched, let additional = schema.additionalProperties {
                matched = true
                if additional.constant == false {
                    fail(
                        index, "additionalProperties", "no properties besides those listed", "\"\(token.text)\"",
                        depth: frames.count)
                } else {
                    addChild(additional, parent: index, role: .property, branch: -1)
                }
            }
            if slots[index].collects, matched { extra(index).keys.insert(token.text) }
            if !matched, let unevaluated = schema.unevaluatedProperties {
                let extra = extra(index)
                extra.pendingKeys.append((token.text, true, nil))
                addChild(unevaluated, parent: index, role: .unevaluatedProperty, branch: extra.pendingKeys.count - 1)
            }
        }
        return true
    }

    /// A member of an object whose one slot has a plain object schema: a name lookup, the
    /// seen bit, one pending child. No reference counting.
    @inline(__always) mutating func plainMember(_ index: Int, _ token: Token) -> Bool {
        unowned(unsafe) let schema = slots[index].schema
        let keys = schema.keys
        let last = Int(slots[index].lastKey)
        let known: Int
        if last + 1 < keys.count, keys.matches(last + 1, token.bytes) {
            known = last + 1
        } else if let found = keys.lookup(token.bytes) {
            known = found
        } else {
            known = -1
        }
        var target: Unmanaged<Schema>?
        if known >= 0 {
            slots[index].lastKey = Int32(known)
            if known < 64 {
                let bit: UInt64 = 1 << UInt64(known)
                if slots[index].seen & bit != 0 {
                    fail(
                        index, "duplicate-key", "each member name once", "\"\(token.text)\" again", depth: frames.count)
                }
                slots[index].seen |= bit
            } else {
                extra(index).seenBeyond.insert(known)
            }
            target = schema.frozenProperties![known]
        }
        if target == nil && (known < 0 || schema.propertySchemas[known] == nil) {
            if schema.forbidsAdditional {
                fail(
                    index, "additionalProperties", "no properties besides those listed", "\"\(token.text)\"",
                    depth: frames.count)
                return true
            }
            target = schema.frozenAdditional
        }
        guard let target else { return true }
        let reporting = slots[index].reporting
        let single = target._withUnsafeGuaranteedRef { !$0.hasInPlace && !$0.needsWholeValue && !$0.hasUnevaluated }
        if single && !pendingSingle && slots.count == frames[frames.count - 1].end {
            pendingSingle = true
            pendingSchema = target.takeUnretainedValue()
            pendingParent = Int32(index)
            pendingRole = .property
            pendingBranch = Int32(known)
            pendingReporting = reporting
        } else {
            addChild(target.takeUnretainedValue(), parent: index, role: .property, branch: known)
        }
        return true
    }

    /// The children of the next item of the array on top.
    mutating func itemChildren() {
        let top = frames.count - 1
        frames[top].count += 1
        let position = frames[top].count - 1
        for index in frames[top].start..<frames[top].end where slots[index].active {
            unowned(unsafe) let schema = slots[index].schema
            guard schema.hasArrayChecks else { continue }
            if position < schema.prefixItems.count {
                addChild(schema.prefixItems[position], parent: index, role: .item, branch: position)
            } else if let items = schema.items {
                if items.constant == false {
                    fail(index, "items", "at most \(schema.prefixItems.count) items", "more", depth: frames.count)
                } else {
                    addChild(items, parent: index, role: .item, branch: position)
                }
            } else if let unevaluated = schema.unevaluatedItems {
                let extra = extra(index)
                extra.pendingItems.append((position, true, nil))
                addChild(unevaluated, parent: index, role: .unevaluatedItem, branch: extra.pendingItems.count - 1)
            }
            if let contains = schema.contains {
                addChild(contains, parent: index, role: .contains, branch: position)
            }
        }
    }

    mutating func scalar(_ token: Token) -> Bool {
        let depth = frames.count
        if depth == 0 {
            push(root, parent: -1, role: .root, branch: 0, reporting: true, collects: false, scope: 0)
            fold(0, slots.count, .scalar(token), depth: 0)
            slots.truncate(to: 0)
            return true
        }
        if capture.active { capture.scalar(token) }
        let top = depth - 1
        if !frames[top].isObject { itemChildren() }
        if pendingSingle {
            pendingSingle = false
            var outcome = Outcome()
            scalarChecks(pendingSchema, token, reporting: pendingReporting, depth: depth, into: &outcome)
            if !outcome.valid || (pendingRole != .property && pendingRole != .item) {
                deliver(
                    valid: outcome.valid, violation: outcome.violation, extra: nil, role: pendingRole,
                    branch: Int(pendingBranch), to: Int(pendingParent), token: token, depth: depth)
            }
        } else if slots.count > frames[top].end {
            let mark = frames[top].end
            fold(mark, slots.count, .scalar(token), depth: depth)
            slots.truncate(to: mark)
        }
        if !watches.isEmpty {
            if token.kind == .string { for index in watches { extra(index).tag = token.text } }
            watches.removeAll(keepingCapacity: true)
        }
        if frames[top].unique { itemValue(Self.value(of: token), top: top) }
        return true
    }

    mutating func endObject() -> Bool { end() }
    mutating func endArray() -> Bool { end() }

    mutating func end() -> Bool {
        let frame = frames.removeLast()
        path.truncate(to: frame.keyStart)
        var kept: Value?
        var keptTooLarge = false
        if capture.active {
            (kept, keptTooLarge) = capture.end(depth: frames.count)
        }
        if frame.end > frame.start {
            fold(
                frame.start, frame.end,
                .container(object: frame.isObject, count: frame.count, value: kept, tooLarge: keptTooLarge),
                depth: frames.count)
            slots.truncate(to: frame.start)
        }
        if !frames.isEmpty {
            if !watches.isEmpty { watches.removeAll(keepingCapacity: true) }
            let top = frames.count - 1
            if frames[top].unique {
                if let kept {
                    itemValue(kept, top: top)
                } else {
                    for index in frames[top].start..<frames[top].end where slots[index].schema.uniqueItems {
                        extra(index).uniqueTooLarge = true
                    }
                }
            }
        }
        return true
    }
}
