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
    /// The `oneOf` branches that matched, once more than one did.
    var oneOfMatches: [Int] = []
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
