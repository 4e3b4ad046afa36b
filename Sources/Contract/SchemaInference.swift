/// Infers a JSON Schema 2020-12 from sample values (`sluice contract infer`): types seen,
/// `required` = present in every sample object, `null` where nulls were seen, small sets of
/// strings as `enum`. A start for a contract, from real traffic.
public struct SchemaInference {
    /// Most distinct strings kept per location for `enum`.
    public var enumLimit = 6
    /// Fewest samples of a string location before it becomes an `enum`.
    public var enumMinimumSamples = 3

    private var root = Shape()
    public private(set) var samples = 0

    public init() {}

    final class Shape {
        var count = 0
        var types: Set<String> = []
        var objects = 0
        var properties: [(String, Shape)] = []
        var present: [String: Int] = [:]
        var items: Shape?
        var strings: Set<String> = []
        var stringCount = 0
        var tooManyStrings = false

        func property(_ name: String) -> Shape {
            if let found = properties.first(where: { $0.0 == name }) { return found.1 }
            let shape = Shape()
            properties.append((name, shape))
            return shape
        }
    }

    public mutating func add(_ value: Value) {
        samples += 1
        Self.merge(value, into: root, limit: enumLimit)
    }

    private static func merge(_ value: Value, into shape: Shape, limit: Int) {
        shape.count += 1
        shape.types.insert(value.typeName)
        switch value {
        case .object(let members):
            shape.objects += 1
            for (name, member) in members {
                shape.present[name, default: 0] += 1
                merge(member, into: shape.property(name), limit: limit)
            }
        case .array(let items):
            if shape.items == nil { shape.items = Shape() }
            for item in items { merge(item, into: shape.items!, limit: limit) }
        case .string(let text):
            shape.stringCount += 1
            if !shape.tooManyStrings {
                shape.strings.insert(text)
                if shape.strings.count > limit || text.utf8.count > 64 {
                    shape.tooManyStrings = true
                    shape.strings = []
                }
            }
        default: break
        }
    }

    /// The schema (with `$schema` and a title).
    public func schema(title: String) -> Value {
        guard samples > 0 else {
            return .object([("$schema", .string("https://json-schema.org/draft/2020-12/schema"))])
        }
        var members: [(String, Value)] = [
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")), ("title", .string(title)),
            ("description", .string("Inferred by sluice contract infer from \(samples) sample(s).")),
        ]
        if case .object(let body) = Self.schema(root, enumLimit: enumLimit, enumMinimum: enumMinimumSamples) {
            members += body
        }
        return .object(members)
    }

    private static func schema(_ shape: Shape, enumLimit: Int, enumMinimum: Int) -> Value {
        var types = shape.types
        // An integer location that also saw fractions is a number.
        if types.contains("number") { types.remove("integer") }
        let order = ["object", "array", "string", "integer", "number", "boolean", "null"]
        let sorted = order.filter { types.contains($0) }
        var members: [(String, Value)] = []
        members.append(("type", sorted.count == 1 ? .string(sorted[0]) : .array(sorted.map(Value.string))))
        if types.contains("object") {
            members.append(
                (
                    "properties",
                    .object(
                        shape.properties.map { ($0.0, schema($0.1, enumLimit: enumLimit, enumMinimum: enumMinimum)) })
                ))
            let required = shape.properties.map(\.0).filter { shape.present[$0] == shape.objects }
            if !required.isEmpty { members.append(("required", .array(required.map(Value.string)))) }
        }
        if types.contains("array"), let items = shape.items, items.count > 0 {
            members.append(("items", schema(items, enumLimit: enumLimit, enumMinimum: enumMinimum)))
        }
        if types.subtracting(["null"]) == ["string"], !shape.tooManyStrings, shape.stringCount >= enumMinimum,
            !shape.strings.isEmpty
        {
            var values = shape.strings.sorted().map(Value.string)
            if types.contains("null") { values.append(.null) }
            members.append(("enum", .array(values)))
        }
        return .object(members)
    }
}
