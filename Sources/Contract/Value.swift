/// A JSON value held whole: schema documents, and the few instance values a keyword must keep
/// (`enum`/`const` of structures, `uniqueItems`), bounded by the validator. Numbers keep their exact
/// decimal value; objects keep their member order (for messages) and compare unordered.
public indirect enum Value: Sendable {
    case null
    case bool(Bool)
    case number(Number)
    case string(String)
    case array([Value])
    case object([(String, Value)])

    public subscript(key: String) -> Value? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var members: [(String, Value)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var items: [Value]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var number: Number? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The JSON Schema type name of the value (`integer` for numbers without a fraction).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let number): number.isInteger ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Follows a JSON Pointer (RFC 6901) from this value.
    public func resolve(pointer: String) -> Value? {
        var current = self
        for token in Value.tokens(of: pointer) {
            switch current {
            case .object:
                guard let next = current[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), index >= 0, index < items.count,
                    token == "0" || !token.hasPrefix("0")
                else { return nil }
                current = items[index]
            default: return nil
            }
        }
        return current
    }

    /// The unescaped reference tokens of a JSON Pointer (`/a~1b/c` → `["a/b", "c"]`).
    public static func tokens(of pointer: String) -> [String] {
        guard !pointer.isEmpty else { return [] }
        return pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            String($0).replacingOccurrences("~1", "/").replacingOccurrences("~0", "~")
        }
    }

    /// One reference token escaped for a JSON Pointer.
    public static func escape(_ token: String) -> String {
        token.replacingOccurrences("~", "~0").replacingOccurrences("/", "~1")
    }

    /// Compact JSON text.
    public var json: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let number): out += number.jsonText
        case .string(let text): Value.quote(text, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                Value.quote(member.0, into: &out)
                out += ":"
                member.1.write(to: &out)
            }
            out += "}"
        }
    }

    /// A JSON string literal for `text` (the one quoting of the project: Sluice's problem bodies,
    /// events and admin API use it too).
    public static func quoted(_ text: String) -> String {
        var out = ""
        quote(text, into: &out)
        return out
    }

    static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension Value: Equatable {
    /// JSON Schema equality: numbers by value (`1 == 1.0`), objects regardless of member order.
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return Number.compare(a, b) == 0
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (key, value) in a {
                guard let other = b.first(where: { $0.0 == key }), other.1 == value else { return false }
            }
            return true
        default: return false
        }
    }
}

extension Value: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let number): hasher.combine(number)
        case .string(let text): hasher.combine(text)
        case .array(let items):
            hasher.combine(items.count)
            for item in items { hasher.combine(item) }
        case .object(let members):
            // Order-independent: the sum of the members' hashes.
            var sum = 0
            for (key, value) in members {
                var member = Hasher()
                member.combine(key)
                member.combine(value)
                sum = sum &+ member.finalize()
            }
            hasher.combine(members.count)
            hasher.combine(sum)
        }
    }
}

extension String {
    /// Foundation-free replacement of every occurrence of `target`.
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

extension Value {
    /// Parses JSON text (strict RFC 8259; nesting up to 512).
    public static func parse(_ bytes: [UInt8]) throws(ContractError) -> Value {
        var reader = JSONReader(bytes: bytes)
        do throws(JSONReader.Failure) {
            return try reader.document()
        } catch {
            throw ContractError(file: "-", line: error.line, pointer: nil, message: error.message)
        }
    }

    /// Pretty JSON text (two spaces), member order kept.
    public func pretty(indent: String = "") -> String {
        switch self {
        case .array(let items) where !items.isEmpty:
            let inner = indent + "  "
            return "[\n" + items.map { inner + $0.pretty(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members) where !members.isEmpty:
            let inner = indent + "  "
            return "{\n"
                + members.map { inner + Value.string($0.0).json + ": " + $0.1.pretty(indent: inner) }.joined(
                    separator: ",\n") + "\n" + indent + "}"
        default: return json
        }
    }
}
