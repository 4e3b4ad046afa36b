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
        var dependentValid: UInt64 = 0
        var containsCount: Int32 = 0
        /// The first `oneOf` branch that matched (the others that did are in `extra`).
        var firstOneOfMatch: Int32 = -1
        var violation: Violation?
        var extra: SlotExtra?
    }

    static let ifValid: UInt8 = 1
    static let thenValid: UInt8 = 2
    static let elseValid: UInt8 = 4
    static let notValid: UInt8 = 8

    struct Frame: PointerFrame {
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
    let slots = Arena<Slot>(capacity: 64)
    let frames = Arena<Frame>(capacity: 16)
    let path = ByteStack()
    var scopes: [(resource: String, parent: Int32)] = []
    var scopeMemo: [String: Int32] = [:]
    var capture = Capture()
    var watches: [Int] = []
    var stopped = false

    // The one pending child of the next value, when it needs no slot of its own.
    var pendingSingle = false
    unowned(unsafe) var pendingSchema: Schema
    var pendingParent: Int32 = -1
    var pendingRole = Role.root
    var pendingBranch: Int32 = 0
    var pendingReporting = false

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
    func pointer(_ depth: Int) -> String { path.pointer(frames, depth: depth) }

    mutating func record(_ violation: Violation) {
        verdict.add(violation, keep: options.keep)
    }

    mutating func fail(
        _ index: Int, _ keyword: String, _ expected: String, _ found: String, depth: Int, schema: Schema? = nil,
        at location: String? = nil
    ) {
        slots[index].valid = false
        let shown = location ?? (schema ?? slots[index].schema).location
        if slots[index].reporting {
            record(
                Violation(pointer: pointer(depth), keyword: keyword, expected: expected, found: found, schema: shown))
        } else if slots[index].violation == nil {
            slots[index].violation = Violation(
                pointer: pointer(depth), keyword: keyword, expected: expected, found: found, schema: shown)
        }
    }

    /// A violation found inside a branch, now known to matter.
    mutating func fail(_ index: Int, with violation: Violation?, otherwise keyword: String, depth: Int) {
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

    mutating func scope(for schema: Schema, parentScope: Int32) -> Int32 {
        guard !dynamicTargets.isEmpty else { return 0 }
        if parentScope >= 0, scopes[Int(parentScope)].resource == schema.resource { return parentScope }
        let key = "\(parentScope) " + schema.resource
        if let known = scopeMemo[key] { return known }
        scopes.append((schema.resource, parentScope))
        let index = Int32(scopes.count - 1)
        scopeMemo[key] = index
        return index
    }

    func resolve(_ reference: Schema.DynamicRef, scope: Int32) -> Schema {
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
    mutating func push(
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
                index, "$ref", "a schema that reaches the value",
                "schemas that loop, or apply one another more than 128 deep",
                depth: frames.count)
            return
        }
        let ownScope = slots[index].scope
        let ownCollects = slots[index].collects
        // Only allOf-like children report as they go; `not`'s annotations never count.
        func child(_ sub: Schema, _ role: Role, _ branch: Int = 0) {
            push(
                sub, parent: index, role: role, branch: branch, reporting: reporting && role.reportsDirectly,
                collects: role == .not ? false : ownCollects, scope: ownScope, expansion: expansion + 1)
        }
        for sub in schema.allOf { child(sub, .allOf) }
        if let target = schema.ref { child(target, .allOf) }
        if let dynamic = schema.dynamicRef { child(resolve(dynamic, scope: ownScope), .allOf) }
        for (position, sub) in schema.anyOf.enumerated() { child(sub, .anyOf, position) }
        for (position, sub) in schema.oneOf.enumerated() { child(sub, .oneOf, position) }
        if let sub = schema.not { child(sub, .not) }
        if let condition = schema.ifSchema {
            child(condition, .ifCondition)
            if let sub = schema.thenSchema { child(sub, .then) }
            if let sub = schema.elseSchema { child(sub, .otherwise) }
        }
        for (position, dependent) in schema.dependentSchemas.enumerated() { child(dependent.1, .dependent, position) }
    }

    /// A child of container slot `parent` for the next value.
    @inline(__always) mutating func addChild(_ schema: Schema, parent: Int, role: Role, branch: Int) {
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
    @inline(__always) mutating func materialize() {
        guard pendingSingle else { return }
        pendingSingle = false
        push(
            pendingSchema, parent: Int(pendingParent), role: pendingRole, branch: Int(pendingBranch),
            reporting: pendingReporting, collects: false, scope: slots[Int(pendingParent)].scope)
    }
}
