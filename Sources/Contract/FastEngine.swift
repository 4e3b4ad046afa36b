/// Runs a ``FastProgram``: one frame per open container (its node, member count, the bits of
/// the names seen), one pending node for the next member. Violations are worded by the same
/// functions as ``Engine``'s, in the same order, so the two give the same verdicts.
struct FastEngine: TokenSink {
    struct Frame: PointerFrame {
        /// The node validating this container (-1: nothing to check).
        var node: Int32
        /// Its members are checked (the container has a type the node allows).
        var active: Bool
        var isObject: Bool
        var count = 0
        var seen: UInt64 = 0
        var lastKey: Int32 = -1
        var keyStart: Int
        var keyEnd: Int
    }

    let program: FastProgram
    private let nodes: UnsafeMutablePointer<FastProgram.Node>
    private let targets: UnsafeMutablePointer<Int32>
    let options: Engine.Options
    var verdict = Verdict()
    private let frames = Arena<Frame>(capacity: 32)
    private let path = ByteStack()
    /// The node for the next member's value (-1: none).
    private var pending: Int32 = -1
    private(set) var stopped = false

    init(program: FastProgram, options: Engine.Options) {
        self.program = program
        nodes = program.nodes
        targets = program.targets
        self.options = options
    }

    // MARK: - Violations

    private func pointer(_ depth: Int) -> String { path.pointer(frames, depth: depth) }

    @inline(never) private mutating func report(
        _ node: Int32, _ keyword: String, _ expected: String, _ found: String, depth: Int, at location: String? = nil
    ) {
        verdict.add(
            Violation(
                pointer: pointer(depth), keyword: keyword, expected: expected, found: found,
                schema: location ?? program.schemas[Int(node)].location), keep: options.keep)
    }

    @inline(never) private mutating func slowScalar(_ node: Int32, _ token: Token, depth: Int) {
        var skipped: [String] = []
        let schema = program.schemas[Int(node)]
        for failure in Engine.scalarFailures(schema, token, skipped: &skipped) {
            report(node, failure.keyword, failure.expected, failure.found, depth: depth)
        }
        for keyword in skipped {
            verdict.notes.append("\(keyword) at \(pointer(depth)) not checked: the number has too many digits")
        }
    }

    // MARK: - Tokens

    mutating func malformed(_ message: String, at offset: Int, atObjectLevel: Bool) {
        verdict.add(
            Violation(
                // Bytes that fail inside an array are the item that was to come next; between
                // an object's members, the object.
                pointer: atObjectLevel
                    ? path.pointer(frames, depth: frames.count - 1)
                    : path.pointer(frames, depth: frames.count, nextItem: true), keyword: "json",
                expected: "JSON text",
                found: "\(message) at byte \(offset)", schema: ""), keep: options.keep)
        stopped = true
    }

    mutating func key(_ token: Token) -> Bool {
        let top = frames.count - 1
        frames[top].count += 1
        path.replace(from: frames[top].keyStart, with: token.bytes)
        frames[top].keyEnd = path.count
        let node = frames[top].node
        pending = -1
        guard node >= 0, frames[top].active else { return true }
        let n = nodes + Int(node)
        guard n.pointee.objectChecks else { return true }
        let keys = n.pointee.keys
        let last = Int(frames[top].lastKey)
        let known: Int
        if last + 1 < keys.count, keys.matches(last + 1, token.bytes) {
            known = last + 1
        } else {
            known = keys.lookup(token.bytes)
        }
        if known >= 0 {
            frames[top].lastKey = Int32(known)
            let bit: UInt64 = 1 << UInt64(known)
            if frames[top].seen & bit != 0 {
                report(node, "duplicate-key", "each member name once", "\"\(token.text)\" again", depth: frames.count)
            }
            frames[top].seen |= bit
            let target = targets[n.pointee.propertyStart + known]
            if target >= 0 {
                pending = target
                return true
            }
        }
        let additional = n.pointee.additional
        if additional == .forbidden {
            report(
                node, "additionalProperties", "no properties besides those listed", "\"\(token.text)\"",
                depth: frames.count)
        } else {
            pending = additional.raw
        }
        return true
    }

    /// The node of the next item of the array frame `index` (counting it).
    @inline(__always) private mutating func itemNode(_ index: Int) -> Int32 {
        frames[index].count += 1
        let node = frames[index].node
        guard node >= 0, frames[index].active else { return -1 }
        let n = nodes + Int(node)
        guard n.pointee.arrayChecks else { return -1 }
        let position = frames[index].count - 1
        if position < n.pointee.prefixCount { return targets[n.pointee.prefixStart + position] }
        let items = n.pointee.items
        if items == .forbidden {
            report(node, "items", "at most \(n.pointee.prefixCount) items", "more", depth: frames.count)
            return -1
        }
        return items.raw
    }

    mutating func scalar(_ token: Token) -> Bool {
        let depth = frames.count
        let node: Int32 = depth == 0 ? 0 : (frames[depth - 1].isObject ? pending : itemNode(depth - 1))
        guard node >= 0 else { return true }
        let n = nodes + Int(node)
        if n.pointee.constant != .keywords {
            if n.pointee.constant == .falseSchema { slowScalar(node, token, depth: depth) }
            return true
        }
        let types = n.pointee.types
        if types != Schema.Types.all.rawValue {
            let allowed: Bool
            switch token.kind {
            case .string: allowed = types & Schema.Types.string.rawValue != 0
            case .null: allowed = types & Schema.Types.null.rawValue != 0
            case .trueLiteral, .falseLiteral: allowed = types & Schema.Types.boolean.rawValue != 0
            case .number:
                allowed =
                    types & Schema.Types.number.rawValue != 0
                    || (types & Schema.Types.integer.rawValue != 0
                        && (types & Schema.Types.integerByForm.rawValue != 0
                            ? Engine.isWrittenAsInteger(token) : Engine.isInteger(token)))
            }
            if !allowed {
                slowScalar(node, token, depth: depth)
                return true
            }
        }
        guard n.pointee.scalarChecks else { return true }
        if n.pointee.simpleScalars, simpleScalarsPass(n, token) { return true }
        slowScalar(node, token, depth: depth)
        return true
    }

    /// Whether the plain scalar keywords (a string enum, small integer bounds, lengths) all pass.
    @inline(__always) private func simpleScalarsPass(_ n: UnsafeMutablePointer<FastProgram.Node>, _ token: Token)
        -> Bool
    {
        if let strings = n.pointee.enumStrings, let offsets = n.pointee.enumOffsets,
            !stringEnumAccepts(strings, offsets, n.pointee.enumCount, n.pointee.enumNull, token)
        {
            return false
        }
        switch token.kind {
        case .number where n.pointee.hasMinimum || n.pointee.hasMaximum:
            guard let value = Engine.smallInteger(token) else { return false }
            if n.pointee.hasMinimum && value < n.pointee.minimum { return false }
            if n.pointee.hasMaximum && value > n.pointee.maximum { return false }
        case .string where n.pointee.minLength >= 0 || n.pointee.maxLength >= 0:
            let minimum = n.pointee.minLength
            let maximum = n.pointee.maxLength
            let length = Engine.codePoints(token, minimum: minimum, maximum: maximum)
            if minimum >= 0 && length < minimum { return false }
            if maximum >= 0 && length > maximum { return false }
        default: break
        }
        return true
    }

    mutating func beginObject() -> Bool { begin(object: true) }
    mutating func beginArray() -> Bool { begin(object: false) }

    private mutating func begin(object: Bool) -> Bool {
        let depth = frames.count
        guard depth < options.maxDepth else {
            verdict.add(
                Violation(
                    pointer: pointer(depth), keyword: "max-depth", expected: "nesting of at most \(options.maxDepth)",
                    found: "deeper", schema: ""), keep: options.keep)
            stopped = true
            return false
        }
        var node: Int32 = depth == 0 ? 0 : (frames[depth - 1].isObject ? pending : itemNode(depth - 1))
        var active = true
        if node >= 0 {
            let n = nodes + Int(node)
            if n.pointee.constant != .keywords {
                if n.pointee.constant == .falseSchema {
                    report(
                        node, "false", "nothing (the schema is false)", object ? "an object" : "an array", depth: depth)
                }
                node = -1
            } else if n.pointee.types & (object ? Schema.Types.object.rawValue : Schema.Types.array.rawValue) == 0 {
                report(
                    node, "type", Engine.typeList(Schema.Types(rawValue: n.pointee.types)), object ? "object" : "array",
                    depth: depth)
                active = false
            }
        }
        frames.append(Frame(node: node, active: active, isObject: object, keyStart: path.count, keyEnd: path.count))
        return true
    }

    mutating func endObject() -> Bool { end() }
    mutating func endArray() -> Bool { end() }

    private mutating func end() -> Bool {
        let frame = frames.removeLast()
        path.truncate(to: frame.keyStart)
        let node = frame.node
        guard node >= 0 else { return true }
        let n = nodes + Int(node)
        let depth = frames.count
        if !frame.active {
        } else if frame.isObject {
            if n.pointee.objectChecks { objectEnd(node, n, frame, depth: depth) }
        } else if n.pointee.arrayChecks {
            if n.pointee.minItems >= 0, frame.count < n.pointee.minItems {
                report(node, "minItems", "at least \(n.pointee.minItems) items", "\(frame.count)", depth: depth)
            }
            if n.pointee.maxItems >= 0, frame.count > n.pointee.maxItems {
                report(node, "maxItems", "at most \(n.pointee.maxItems) items", "\(frame.count)", depth: depth)
            }
        }
        if n.pointee.scalarChecks { containerEnumConst(node, object: frame.isObject, depth: depth) }
        return true
    }

    private mutating func objectEnd(
        _ node: Int32, _ n: UnsafeMutablePointer<FastProgram.Node>, _ frame: Frame, depth: Int
    ) {
        if n.pointee.minProperties >= 0, frame.count < n.pointee.minProperties {
            report(
                node, "minProperties", "at least \(n.pointee.minProperties) properties", "\(frame.count)", depth: depth)
        }
        if n.pointee.maxProperties >= 0, frame.count > n.pointee.maxProperties {
            report(
                node, "maxProperties", "at most \(n.pointee.maxProperties) properties", "\(frame.count)", depth: depth)
        }
        let lifted = options.direction == .request ? n.pointee.readOnlyMask : n.pointee.writeOnlyMask
        var missing = n.pointee.requiredMask & ~lifted & ~frame.seen
        while missing != 0 {
            let key = missing.trailingZeroBitCount
            missing &= missing - 1
            report(
                node, "required", "property \"\(program.schemas[Int(node)].keys.names[key])\"", "absent", depth: depth)
        }
        if n.pointee.rejectsAccess {
            var sent = (options.direction == .request ? n.pointee.readOnlyMask : n.pointee.writeOnlyMask) & frame.seen
            while sent != 0 {
                let key = sent.trailingZeroBitCount
                sent &= sent - 1
                let (keyword, expected) = Engine.accessViolation(
                    program.schemas[Int(node)].keys.names[key], direction: options.direction)
                // Located at the property that says readOnly (writeOnly), not its object.
                report(
                    node, keyword, expected, "present", depth: depth,
                    at: Engine.propertyLocation(program.schemas[Int(node)], key))
            }
        }
    }

    /// `enum`/`const` of scalars against a container: never equal.
    @inline(never) private mutating func containerEnumConst(_ node: Int32, object: Bool, depth: Int) {
        let schema = program.schemas[Int(node)]
        if let values = schema.enumValues {
            report(node, "enum", "one of \(Engine.list(values))", object ? "an object" : "an array", depth: depth)
        }
        if let constant = schema.constValue {
            report(node, "const", Engine.short(constant.json), object ? "an object" : "an array", depth: depth)
        }
    }
}
