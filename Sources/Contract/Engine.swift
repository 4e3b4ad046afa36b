import Regexp

/// The streaming evaluation of one instance against one compiled schema.
///
/// Every (schema, instance value) pair being evaluated is a ``Slot`` in one arena. The slots of a
/// value form a group: the schemas that apply to it directly, followed by their in-place
/// applicators (`allOf`, `$ref`, `anyOf`, `if`, …) pushed when the group is made, parents before
/// children. A container's group stays open while its members arrive; each member gets the child
/// slots its parents' keywords give it (`properties`, `items`, …). When a value ends, its group is
/// folded in reverse (children before parents) and each slot hands its result to its parent.
/// Memory is the open groups: the schema's breadth times the nesting depth, never the body's size.
struct Engine: TokenSink {
    struct Options {
        var direction = Direction.response
        var maxDepth = 512
        var keep = 20
        /// Bytes of one instance value kept for `enum`/`const` of structures and `uniqueItems`.
        var maxKept = 1 << 20
    }

    enum Role: UInt8 {
        case root, allOf, anyOf, oneOf, not, ifCondition, then, otherwise, dependent
        case property, item, contains, unevaluatedProperty, unevaluatedItem, propertyName

        var inPlace: Bool { rawValue <= Role.dependent.rawValue && self != .root }
        /// Failures inside are reported as they are (not only as the parent's).
        var reportsDirectly: Bool { self == .allOf || self == .property || self == .item }
    }

    struct Slot {
        unowned(unsafe) var schema: Schema
        var parent: Int32
        var branch: Int32
        var role: Role
        var valid = true
        var reporting: Bool
        var collects: Bool
        /// The container keywords apply (the value is a container of a type the schema allows).
        var active = true
        var results: UInt8 = 0
        var scope: Int32
        var lastKey: Int32 = -1
        var seen: UInt64 = 0
        var anyOfValid: Int32 = 0
        var oneOfValid: Int32 = 0
        var oneOfMask: UInt64 = 0
        var dependentValid: UInt64 = 0
        var containsCount: Int32 = 0
        var violation: Violation?
        var extra: SlotExtra?
    }

    static let ifValid: UInt8 = 1
    static let thenValid: UInt8 = 2
    static let elseValid: UInt8 = 4
    static let notValid: UInt8 = 8

    struct Frame {
        var start: Int
        var end: Int
        var isObject: Bool
        var count = 0
        var keyStart: Int
        var keyEnd: Int
        var propertyNames = false
        var unique = false
    }

    let root: Schema
    let options: Options
    let dynamicTargets: [String: Schema]
    var verdict = Verdict()
    private let slots = Arena<Slot>(capacity: 64)
    private let frames = Arena<Frame>(capacity: 16)
    private let path = ByteStack()
    private var scopes: [(resource: String, parent: Int32)] = []
    private var scopeMemo: [String: Int32] = [:]
    private var capture = Capture()
    private var watches: [Int] = []
    private(set) var stopped = false

    // The one pending child of the next value, when it needs no slot of its own.
    private var pendingSingle = false
    private unowned(unsafe) var pendingSchema: Schema
    private var pendingParent: Int32 = -1
    private var pendingRole = Role.root
    private var pendingBranch: Int32 = 0
    private var pendingReporting = false

    init(root: Schema, options: Options, dynamicTargets: [String: Schema]) {
        self.root = root
        self.options = options
        self.dynamicTargets = dynamicTargets
        pendingSchema = root
        if !dynamicTargets.isEmpty {
            scopes.append((root.resource, -1))
            scopeMemo["-1 " + root.resource] = 0
        }
    }

    // MARK: - Pointers and violations

    /// The JSON Pointer of the value at nesting `depth` (the members of the first `depth` frames).
    func pointer(_ depth: Int) -> String {
        var out = ""
        for index in 0..<min(depth, frames.count) {
            let frame = frames[index]
            if frame.isObject {
                let key = path.text(frame.keyStart, frame.keyEnd)
                out += "/" + Value.escape(key)
            } else {
                out += "/\(max(frame.count - 1, 0))"
            }
        }
        return out
    }

    private mutating func record(_ violation: Violation) {
        verdict.add(violation, keep: options.keep)
    }

    private mutating func fail(
        _ index: Int, _ keyword: String, _ expected: String, _ found: String, depth: Int, schema: Schema? = nil
    ) {
        slots[index].valid = false
        let shown = (schema ?? slots[index].schema).location
        if slots[index].reporting {
            record(
                Violation(pointer: pointer(depth), keyword: keyword, expected: expected, found: found, schema: shown))
        } else if slots[index].violation == nil {
            slots[index].violation = Violation(
                pointer: pointer(depth), keyword: keyword, expected: expected, found: found, schema: shown)
        }
    }

    /// A violation found inside a branch, now known to matter.
    private mutating func fail(_ index: Int, with violation: Violation?, otherwise keyword: String, depth: Int) {
        if let violation {
            slots[index].valid = false
            if slots[index].reporting {
                record(violation)
            } else if slots[index].violation == nil {
                slots[index].violation = violation
            }
        } else {
            fail(index, keyword, "the \(keyword) schema to hold", "it did not", depth: depth)
        }
    }

    // MARK: - Making groups

    private mutating func scope(for schema: Schema, parentScope: Int32) -> Int32 {
        guard !dynamicTargets.isEmpty else { return 0 }
        if parentScope >= 0, scopes[Int(parentScope)].resource == schema.resource { return parentScope }
        let key = "\(parentScope) " + schema.resource
        if let known = scopeMemo[key] { return known }
        scopes.append((schema.resource, parentScope))
        let index = Int32(scopes.count - 1)
        scopeMemo[key] = index
        return index
    }

    private func resolve(_ reference: Schema.DynamicRef, scope: Int32) -> Schema {
        guard let name = reference.anchor, !dynamicTargets.isEmpty else { return reference.target }
        var chain: [Int32] = []
        var current = scope
        while current >= 0 {
            chain.append(current)
            current = scopes[Int(current)].parent
        }
        for index in chain.reversed() {
            if let target = dynamicTargets[scopes[Int(index)].resource + "#" + name] { return target }
        }
        return reference.target
    }

    /// Pushes a slot and its in-place applicators.
    private mutating func push(
        _ schema: Schema, parent: Int, role: Role, branch: Int, reporting: Bool, collects: Bool, scope: Int32,
        expansion: Int = 0
    ) {
        let index = slots.count
        slots.append(
            Slot(
                schema: schema, parent: Int32(parent), branch: Int32(branch), role: role, reporting: reporting,
                collects: collects || schema.hasUnevaluated, scope: self.scope(for: schema, parentScope: scope)))
        guard schema.hasInPlace else { return }
        guard expansion < 128 else {
            fail(
                index, "$ref", "a schema that reaches the value", "references that loop without end",
                depth: frames.count)
            return
        }
        let ownScope = slots[index].scope
        let ownCollects = slots[index].collects
        for sub in schema.allOf {
            push(
                sub, parent: index, role: .allOf, branch: 0, reporting: reporting, collects: ownCollects,
                scope: ownScope,
                expansion: expansion + 1)
        }
        if let target = schema.ref {
            push(
                target, parent: index, role: .allOf, branch: 0, reporting: reporting, collects: ownCollects,
                scope: ownScope, expansion: expansion + 1)
        }
        if let dynamic = schema.dynamicRef {
            push(
                resolve(dynamic, scope: ownScope), parent: index, role: .allOf, branch: 0, reporting: reporting,
                collects: ownCollects, scope: ownScope, expansion: expansion + 1)
        }
        for (position, sub) in schema.anyOf.enumerated() {
            push(
                sub, parent: index, role: .anyOf, branch: position, reporting: false, collects: ownCollects,
                scope: ownScope, expansion: expansion + 1)
        }
        for (position, sub) in schema.oneOf.enumerated() {
            push(
                sub, parent: index, role: .oneOf, branch: position, reporting: false, collects: ownCollects,
                scope: ownScope, expansion: expansion + 1)
        }
        if let sub = schema.not {
            push(
                sub, parent: index, role: .not, branch: 0, reporting: false, collects: false, scope: ownScope,
                expansion: expansion + 1)
        }
        if let condition = schema.ifSchema {
            push(
                condition, parent: index, role: .ifCondition, branch: 0, reporting: false, collects: ownCollects,
                scope: ownScope, expansion: expansion + 1)
            if let sub = schema.thenSchema {
                push(
                    sub, parent: index, role: .then, branch: 0, reporting: false, collects: ownCollects,
                    scope: ownScope,
                    expansion: expansion + 1)
            }
            if let sub = schema.elseSchema {
                push(
                    sub, parent: index, role: .otherwise, branch: 0, reporting: false, collects: ownCollects,
                    scope: ownScope, expansion: expansion + 1)
            }
        }
        for (position, dependent) in schema.dependentSchemas.enumerated() {
            push(
                dependent.1, parent: index, role: .dependent, branch: position, reporting: false,
                collects: ownCollects, scope: ownScope, expansion: expansion + 1)
        }
    }

    /// A child of container slot `parent` for the next value.
    @inline(__always) private mutating func addChild(_ schema: Schema, parent: Int, role: Role, branch: Int) {
        let reporting = slots[parent].reporting && role.reportsDirectly
        if !pendingSingle, slots.count == frames[frames.count - 1].end, !schema.hasInPlace, !schema.needsWholeValue,
            !schema.hasUnevaluated
        {
            pendingSingle = true
            pendingSchema = schema
            pendingParent = Int32(parent)
            pendingRole = role
            pendingBranch = Int32(branch)
            pendingReporting = reporting
            return
        }
        materialize()
        push(
            schema, parent: parent, role: role, branch: branch, reporting: reporting, collects: false,
            scope: slots[parent].scope)
    }

    /// Turns the single pending child into a slot.
    @inline(__always) private mutating func materialize() {
        guard pendingSingle else { return }
        pendingSingle = false
        push(
            pendingSchema, parent: Int(pendingParent), role: pendingRole, branch: Int(pendingBranch),
            reporting: pendingReporting, collects: false, scope: slots[Int(pendingParent)].scope)
    }

    // MARK: - Tokens

    mutating func malformed(_ message: String, at offset: Int) {
        record(
            Violation(
                pointer: pointer(frames.count), keyword: "json", expected: "JSON text",
                found: "\(message) at byte \(offset)",
                schema: ""))
        stopped = true
    }

    mutating func beginObject() -> Bool { begin(object: true) }
    mutating func beginArray() -> Bool { begin(object: false) }

    private mutating func begin(object: Bool) -> Bool {
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
    @inline(__always) private mutating func plainMember(_ index: Int, _ token: Token) -> Bool {
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
    private mutating func itemChildren() {
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

    private mutating func end() -> Bool {
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

    /// The end of the body.
    mutating func finish() {
        if frames.isEmpty && !stopped && verdict.total == 0 && slots.isEmpty { return }
    }

    // MARK: - Folding

    enum Kind {
        case scalar(Token)
        case container(object: Bool, count: Int, value: Value?, tooLarge: Bool)
    }

    struct Outcome {
        var valid = true
        var violation: Violation?
    }

    private mutating func fold(_ start: Int, _ end: Int, _ kind: Kind, depth: Int) {
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
    private mutating func deliver(
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
            } else if slots[parent].schema.discriminator != nil {
                extra(parent).branchViolations[branch] = violation
            }
        case .oneOf:
            if valid {
                slots[parent].oneOfValid += 1
                if branch < 64 { slots[parent].oneOfMask |= 1 << UInt64(branch) }
            } else if slots[parent].schema.discriminator != nil {
                extra(parent).branchViolations[branch] = violation
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

    private mutating func finishSlot(_ index: Int, _ kind: Kind, depth: Int) {
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
        if !schema.anyOf.isEmpty {
            if let discriminator = schema.discriminator, let tag = slot.extra?.tag {
                discriminated(index, discriminator, tag: tag, validMask: nil, keyword: "anyOf", depth: depth)
            } else if slot.anyOfValid == 0 {
                fail(index, "anyOf", "at least one of \(schema.anyOf.count) schemas", "none matched", depth: depth)
            }
        }
        if !schema.oneOf.isEmpty {
            if let discriminator = schema.discriminator, let tag = slot.extra?.tag {
                discriminated(index, discriminator, tag: tag, validMask: slot.oneOfMask, keyword: "oneOf", depth: depth)
            } else if slot.oneOfValid != 1 {
                fail(
                    index, "oneOf", "exactly one of \(schema.oneOf.count) schemas",
                    slot.oneOfValid == 0 ? "none matched" : "\(slot.oneOfValid) matched", depth: depth)
            }
        }
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

    private mutating func discriminated(
        _ index: Int, _ discriminator: Schema.Discriminator, tag: String, validMask: UInt64?, keyword: String,
        depth: Int
    ) {
        guard let branch = discriminator.branches[tag] else {
            fail(
                index, "discriminator",
                "\(discriminator.property) one of \(discriminator.branches.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", "))",
                "\"\(tag)\"", depth: depth)
            return
        }
        let valid: Bool
        if let validMask {
            valid = branch < 64 && validMask & (1 << UInt64(branch)) != 0
        } else {
            valid = slots[index].extra?.branchViolations[branch] == nil && slots[index].anyOfValid > 0
        }
        if !valid {
            fail(index, with: slots[index].extra?.branchViolations[branch] ?? nil, otherwise: keyword, depth: depth)
        }
    }

    private func seen(_ index: Int, _ key: Int) -> Bool {
        key < 64 ? slots[index].seen & (1 << UInt64(key)) != 0 : slots[index].extra?.seenBeyond.contains(key) == true
    }

    private mutating func objectEnd(_ index: Int, count: Int, depth: Int) {
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

    private mutating func arrayEnd(_ index: Int, count: Int, depth: Int) {
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
    private mutating func itemValue(_ value: Value, top: Int) {
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

    private mutating func extra(_ index: Int) -> SlotExtra {
        if let extra = slots[index].extra { return extra }
        let extra = SlotExtra()
        slots[index].extra = extra
        return extra
    }
}

/// What a slot keeps beyond its fixed fields, made only when a keyword needs it.
final class SlotExtra {
    /// Member names evaluated here or by valid in-place children (`unevaluatedProperties`).
    var keys: Set<String> = []
    var allKeys = false
    /// Every member or item counts as evaluated for the parents (`additionalProperties`, `unevaluated…`).
    var exportAll = false
    var allItems = false
    var prefix = 0
    /// Items where `contains` matched.
    var indices: Set<Int> = []
    var pendingKeys: [(String, Bool, Violation?)] = []
    var pendingItems: [(Int, Bool, Violation?)] = []
    var branchViolations: [Int: Violation?] = [:]
    var dependentAnnotations: [Int: SlotExtra] = [:]
    var seenBeyond: Set<Int> = []
    var tag: String?
    var unique: [Value: Int] = [:]
    var uniqueBytes = 0
    var uniqueTooLarge = false

    func absorb(_ child: SlotExtra) {
        if child.allKeys || child.exportAll { allKeys = true } else { keys.formUnion(child.keys) }
        if child.allItems || child.exportAll { allItems = true }
        prefix = max(prefix, child.prefix)
        indices.formUnion(child.indices)
        // Evaluated by the child's own unevaluated keywords or its children: already in its sets.
        for (name, valid, _) in child.pendingKeys where valid { keys.insert(name) }
    }
}

/// The instance value being kept (for `enum`/`const` of structures and `uniqueItems`), built from
/// the same tokens, bounded by bytes.
struct Capture {
    private enum Partial {
        case array([Value])
        case object([(String, Value)], String?)
    }

    private var stack: [Partial] = []
    private var rootDepth = -1
    private var bytes = 0
    private var limit = 0
    private var overflowed = false
    var active: Bool { rootDepth >= 0 }

    mutating func begin(object: Bool, depth: Int, limit: Int) {
        if rootDepth < 0 {
            rootDepth = depth
            bytes = 0
            self.limit = limit
            overflowed = false
            stack.removeAll()
        }
        guard !overflowed else { return }
        stack.append(object ? .object([], nil) : .array([]))
    }

    mutating func key(_ token: Token) {
        guard !overflowed, case .object(let members, _) = stack.last else { return }
        bytes += token.bytes.count + 16
        stack[stack.count - 1] = .object(members, token.text)
    }

    mutating func scalar(_ token: Token) {
        guard !overflowed else { return }
        bytes += token.bytes.count + 16
        if bytes > limit {
            overflowed = true
            stack.removeAll()
            return
        }
        add(Engine.value(of: token))
    }

    private mutating func add(_ value: Value) {
        guard let last = stack.popLast() else { return }
        switch last {
        case .array(var items):
            items.append(value)
            stack.append(.array(items))
        case .object(var members, let key):
            members.append((key ?? "", value))
            stack.append(.object(members, nil))
        }
    }

    /// The container that ended at `depth`; (nil, true) when it was too large to keep.
    mutating func end(depth: Int) -> (Value?, Bool) {
        defer { if depth == rootDepth { rootDepth = -1 } }
        guard !overflowed, let last = stack.popLast() else { return (nil, overflowed) }
        let value: Value
        switch last {
        case .array(let items): value = .array(items)
        case .object(let members, _): value = .object(members)
        }
        if !stack.isEmpty { add(value) }
        return (value, false)
    }
}
