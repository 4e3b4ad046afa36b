/// A schema graph that uses only plain keywords — types, `enum`/`const` of scalars, numeric
/// bounds, string lengths, `pattern`, `format`, `properties`/`required`/`additionalProperties`,
/// `items`/`prefixItems`, item and property counts, and `$ref`s (already resolved to their
/// targets) — compiled to a flat array of trivial nodes. ``FastEngine`` runs it with one frame
/// per open container and no reference counting. Graphs with any other keyword (in-place
/// applicators, `unevaluated…`, `uniqueItems`, `contains`, `patternProperties`, …) run on
/// ``Engine``. Messages come from the same functions, so both engines give the same verdicts.
final class FastProgram: @unchecked Sendable {
    /// What a schema is before its keywords: `true`, `false`, or an object of keywords.
    enum Constant: Int8 {
        case keywords = -1
        case falseSchema = 0
        case trueSchema = 1
    }

    /// Where an object's other members, or an array's items past the prefix, are checked: nowhere
    /// (no such keyword), nowhere they may be (`false`), or at a node. One `Int32`, as the
    /// engine's frames keep node numbers (-1 there: nothing to check).
    struct Successor: Equatable {
        let raw: Int32
        static let unconstrained = Successor(raw: -1)
        static let forbidden = Successor(raw: -2)
        static func node(_ index: Int32) -> Successor { Successor(raw: index) }
    }

    struct Node {
        var types: UInt8
        var constant: Constant
        /// Any scalar keyword besides the type (enum, const, numbers, strings).
        var scalarChecks: Bool
        /// Scalar checks the fast path decides alone: a string enum, small integer bounds, lengths.
        var simpleScalars: Bool
        var enumStrings: UnsafeMutablePointer<UInt8>?
        var enumOffsets: UnsafeMutablePointer<Int>?
        var enumCount: Int
        var enumNull: Bool
        var hasMinimum: Bool
        var hasMaximum: Bool
        var minimum: Int64
        var maximum: Int64
        var minLength: Int
        var maxLength: Int
        // Objects
        var objectChecks: Bool
        /// ``Schema/rejectsAccess`` (beside the other flag: no padding of its own).
        var rejectsAccess: Bool
        var keys: KeyTable.Raw
        /// Index in ``targets`` of the first key's target.
        var propertyStart: Int
        /// `additionalProperties`.
        var additional: Successor
        var requiredMask: UInt64
        var readOnlyMask: UInt64
        var writeOnlyMask: UInt64
        var minProperties: Int
        var maxProperties: Int
        // Arrays
        var arrayChecks: Bool
        var prefixStart: Int
        var prefixCount: Int
        /// `items` (after `prefixItems`).
        var items: Successor
        var minItems: Int
        var maxItems: Int
    }

    private(set) var nodes: UnsafeMutablePointer<Node>
    let count: Int
    /// Per node: property targets (by key index), then prefix items; -1 = no schema.
    private(set) var targets: UnsafeMutablePointer<Int32>
    /// The schemas behind the nodes (for messages and the rarer keywords).
    let schemas: [Schema]

    private init(nodes: [Node], targets: [Int32], schemas: [Schema]) {
        count = nodes.count
        self.nodes = .allocate(capacity: max(nodes.count, 1))
        self.nodes.initialize(from: nodes, count: nodes.count)
        self.targets = .allocate(capacity: max(targets.count, 1))
        self.targets.initialize(from: targets, count: targets.count)
        self.schemas = schemas
    }

    deinit {
        nodes.deallocate()
        targets.deallocate()
    }

    /// The program for `root`'s graph, or `nil` when some reachable schema needs ``Engine``.
    static func build(_ root: Schema) -> FastProgram? {
        var order: [Schema] = []
        var index: [ObjectIdentifier: Int] = [:]
        var stack = [root]
        while let schema = stack.popLast() {
            guard index[ObjectIdentifier(schema)] == nil else { continue }
            guard eligible(schema) else { return nil }
            index[ObjectIdentifier(schema)] = order.count
            order.append(schema)
            stack.append(contentsOf: schema.propertySchemas.compactMap { $0 })
            stack.append(contentsOf: schema.prefixItems)
            if let items = schema.items { stack.append(items) }
            if let additional = schema.additionalProperties { stack.append(additional) }
        }
        var nodes: [Node] = []
        var targets: [Int32] = []
        for schema in order {
            let propertyStart = targets.count
            for key in 0..<schema.keys.count {
                let target = key < schema.propertySchemas.count ? schema.propertySchemas[key] : nil
                targets.append(target.map { Int32(index[ObjectIdentifier($0)]!) } ?? -1)
            }
            let prefixStart = targets.count
            for item in schema.prefixItems { targets.append(Int32(index[ObjectIdentifier(item)]!)) }
            func reference(_ schema: Schema?) -> Successor {
                guard let schema else { return .unconstrained }
                return schema.constant == false ? .forbidden : .node(Int32(index[ObjectIdentifier(schema)]!))
            }
            let simpleNumbers =
                !schema.hasNumberChecks
                || (schema.exclusiveMinimum == nil && schema.exclusiveMaximum == nil && schema.multipleOf == nil
                    && (schema.minimum == nil || schema.minimum?.small != nil)
                    && (schema.maximum == nil || schema.maximum?.small != nil))
            let simpleEnum = !schema.hasEnum || schema.enumStringCount >= 0
            nodes.append(
                Node(
                    types: schema.types.rawValue,
                    constant: schema.constant.map { $0 ? .trueSchema : .falseSchema } ?? .keywords,
                    scalarChecks: schema.hasEnum || schema.hasConst || schema.hasNumberChecks || schema.hasStringChecks,
                    simpleScalars: simpleNumbers && simpleEnum && !schema.hasConst && !schema.hasPatternOrFormat,
                    enumStrings: schema.enumStrings, enumOffsets: schema.enumOffsets,
                    enumCount: max(schema.enumStringCount, 0), enumNull: schema.enumAllowsNull,
                    hasMinimum: schema.minimum != nil, hasMaximum: schema.maximum != nil,
                    minimum: schema.minimum?.small ?? 0, maximum: schema.maximum?.small ?? 0,
                    minLength: schema.lengthMinimum, maxLength: schema.lengthMaximum,
                    objectChecks: schema.hasObjectChecks, rejectsAccess: schema.rejectsAccess, keys: schema.keys.raw,
                    propertyStart: propertyStart,
                    additional: reference(schema.additionalProperties), requiredMask: schema.requiredMask,
                    readOnlyMask: schema.readOnlyMask, writeOnlyMask: schema.writeOnlyMask,
                    minProperties: schema.minProperties ?? -1, maxProperties: schema.maxProperties ?? -1,
                    arrayChecks: schema.hasArrayChecks, prefixStart: prefixStart, prefixCount: schema.prefixItems.count,
                    items: reference(schema.items), minItems: schema.minItems ?? -1, maxItems: schema.maxItems ?? -1))
        }
        return FastProgram(nodes: nodes, targets: targets, schemas: order)
    }

    private static func eligible(_ schema: Schema) -> Bool {
        if schema.constant != nil { return true }
        return !schema.hasInPlace && !schema.hasUnevaluated && !schema.needsWholeValue
            && schema.patternProperties.isEmpty
            && schema.propertyNames == nil && schema.dependentRequired.isEmpty && schema.discriminator == nil
            && schema.contains == nil && !schema.uniqueItems && schema.requiredBeyond.isEmpty && schema.keys.count <= 64
    }
}

extension KeyTable {
    /// The table's memory, for readers that must not reference-count (valid while the table lives).
    struct Raw {
        var bytes: UnsafeMutablePointer<UInt8>
        var starts: UnsafeMutablePointer<Int>
        var slots: UnsafeMutablePointer<Int32>
        var mask: Int
        var count: Int

        @inline(__always) func matches(_ index: Int, _ key: UnsafeRawBufferPointer) -> Bool {
            let start = starts[index]
            let length = starts[index + 1] - start
            guard length == key.count else { return false }
            if length == 0 { return true }
            return memcmpBytes(UnsafeRawPointer(bytes + start), key.baseAddress!, length)
        }

        @inline(__always) func lookup(_ key: UnsafeRawBufferPointer) -> Int {
            guard count > 0 else { return -1 }
            var slot = KeyTable.hash(key) & mask
            while true {
                let candidate = Int(slots[slot])
                if candidate < 0 { return -1 }
                if matches(candidate, key) { return candidate }
                slot = (slot + 1) & mask
            }
        }
    }
}
