import Regexp

// The checks of one scalar value against one schema: type, enum/const, numbers, strings.

extension Engine {
    /// Runs `schema`'s scalar keywords on `token`. Violations are recorded when `reporting`, else
    /// the first one is kept in `outcome`.
    mutating func scalarChecks(
        _ schema: Schema, _ token: Token, reporting: Bool, depth: Int, into outcome: inout Outcome
    ) {
        if let constant = schema.constant {
            if !constant {
                flag(&outcome, reporting, schema, "false", "nothing (the schema is false)", Self.describe(token), depth)
            }
            return
        }
        let types = schema.types
        if types != .all {
            let allowed: Bool
            switch token.kind {
            case .string: allowed = types.contains(.string)
            case .null: allowed = types.contains(.null)
            case .trueLiteral, .falseLiteral: allowed = types.contains(.boolean)
            case .number:
                allowed = types.contains(.number) || (types.contains(.integer) && Self.isInteger(token))
            }
            if !allowed {
                flag(&outcome, reporting, schema, "type", Self.typeList(types), Self.typeName(token), depth)
                return
            }
        }
        if schema.hasEnum {
            let accepted = schema.enumAccepts(token) ?? schema.enumValues!.contains(where: { Self.equals(token, $0) })
            if !accepted {
                flag(
                    &outcome, reporting, schema, "enum", "one of \(Self.list(schema.enumValues!))",
                    Self.describe(token),
                    depth)
            }
        }
        if schema.hasConst, let constant = schema.constValue, !Self.equals(token, constant) {
            flag(&outcome, reporting, schema, "const", Self.short(constant.json), Self.describe(token), depth)
        }
        switch token.kind {
        case .number where schema.hasNumberChecks:
            numberChecks(schema, token, reporting: reporting, depth: depth, into: &outcome)
        case .string where schema.hasStringChecks:
            stringChecks(schema, token, reporting: reporting, depth: depth, into: &outcome)
        default: break
        }
    }

    private mutating func flag(
        _ outcome: inout Outcome, _ reporting: Bool, _ schema: Schema, _ keyword: String, _ expected: String,
        _ found: String, _ depth: Int
    ) {
        outcome.valid = false
        let violation = Violation(
            pointer: pointer(depth), keyword: keyword, expected: expected, found: found, schema: schema.location)
        if reporting {
            verdict.add(violation, keep: options.keep)
        } else if outcome.violation == nil {
            outcome.violation = violation
        }
    }

    private mutating func numberChecks(
        _ schema: Schema, _ token: Token, reporting: Bool, depth: Int, into outcome: inout Outcome
    ) {
        // Small integers (ids, counts) against small bounds: no digits array.
        if let value = Self.smallInteger(token), schema.exclusiveMinimum == nil, schema.exclusiveMaximum == nil,
            schema.multipleOf == nil, schema.minimum == nil || schema.minimum?.small != nil,
            schema.maximum == nil || schema.maximum?.small != nil
        {
            if let bound = schema.minimum, value < bound.small! {
                flag(&outcome, reporting, schema, "minimum", "≥ \(bound)", "\(value)", depth)
            }
            if let bound = schema.maximum, value > bound.small! {
                flag(&outcome, reporting, schema, "maximum", "≤ \(bound)", "\(value)", depth)
            }
            return
        }
        guard let number = Number(text: Array(token.bytes)) else {
            flag(&outcome, reporting, schema, "type", "a number Sluice can compare", Self.describe(token), depth)
            return
        }
        let text = Self.describe(token)
        if let bound = schema.minimum, Number.compare(number, bound) < 0 {
            flag(&outcome, reporting, schema, "minimum", "≥ \(bound)", text, depth)
        }
        if let bound = schema.maximum, Number.compare(number, bound) > 0 {
            flag(&outcome, reporting, schema, "maximum", "≤ \(bound)", text, depth)
        }
        if let bound = schema.exclusiveMinimum, Number.compare(number, bound) <= 0 {
            flag(&outcome, reporting, schema, "exclusiveMinimum", "> \(bound)", text, depth)
        }
        if let bound = schema.exclusiveMaximum, Number.compare(number, bound) >= 0 {
            flag(&outcome, reporting, schema, "exclusiveMaximum", "< \(bound)", text, depth)
        }
        if let divisor = schema.multipleOf {
            switch number.isMultiple(of: divisor) {
            case true: break
            case false: flag(&outcome, reporting, schema, "multipleOf", "a multiple of \(divisor)", text, depth)
            case nil:
                verdict.notes.append("multipleOf at \(pointer(depth)) not checked: the number has too many digits")
            }
        }
    }

    private mutating func stringChecks(
        _ schema: Schema, _ token: Token, reporting: Bool, depth: Int, into outcome: inout Outcome
    ) {
        let minimum = schema.lengthMinimum
        let maximum = schema.lengthMaximum
        if minimum >= 0 || maximum >= 0 {
            var length = token.bytes.count
            // Code points: only counted when the bytes alone cannot decide.
            if !token.ascii && (length > maximum || length >= minimum) {
                length = 0
                for byte in token.bytes where byte & 0xC0 != 0x80 { length += 1 }
            }
            if minimum >= 0, length < minimum {
                flag(&outcome, reporting, schema, "minLength", "at least \(minimum) characters", "\(length)", depth)
            }
            if maximum >= 0, length > maximum {
                flag(&outcome, reporting, schema, "maxLength", "at most \(maximum) characters", "\(length)", depth)
            }
        }
        guard schema.hasPatternOrFormat else { return }
        if let pattern = schema.pattern {
            switch pattern.search(token.bytes) {
            case .match: break
            case .noMatch, .invalidSubject:
                flag(
                    &outcome, reporting, schema, "pattern", "a string matching \(pattern.source)", Self.describe(token),
                    depth)
            case .limitExceeded:
                flag(
                    &outcome, reporting, schema, "pattern", "a string matching \(pattern.source)",
                    "a string the pattern cannot decide within its match limit", depth)
            }
        }
        if let format = schema.format, !format.accepts(token.text) {
            flag(&outcome, reporting, schema, "format", "a valid \(format.name)", Self.describe(token), depth)
        }
    }

    // MARK: - Token helpers

    static func isInteger(_ token: Token) -> Bool {
        for byte in token.bytes where byte == 0x2E || byte | 0x20 == 0x65 {
            return Number(text: Array(token.bytes))?.isInteger ?? false
        }
        return true
    }

    /// The value of an integer token of at most 18 digits (no fraction, no exponent).
    @inline(__always) static func smallInteger(_ token: Token) -> Int64? {
        let bytes = token.bytes
        guard bytes.count > 0, bytes.count <= 18 else { return nil }
        var index = 0
        var negative = false
        if bytes[0] == 0x2D {
            negative = true
            index = 1
        }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- 0x30
            guard digit <= 9 else { return nil }
            value = value &* 10 &+ Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    static func typeName(_ token: Token) -> String {
        switch token.kind {
        case .string: "string"
        case .null: "null"
        case .trueLiteral, .falseLiteral: "boolean"
        case .number: isInteger(token) ? "integer" : "number"
        }
    }

    static func typeList(_ types: Schema.Types) -> String {
        let names = types.names
        return names.count == 1 ? names[0] : "one of " + names.joined(separator: ", ")
    }

    /// A token as it would be written in a message (`"closed"`, `12`, `null`), shortened.
    static func describe(_ token: Token) -> String {
        switch token.kind {
        case .string: short(value(of: token).json)
        default: short(token.text)
        }
    }

    static func short(_ text: String) -> String {
        text.count <= 80 ? text : String(text.prefix(77)) + "…"
    }

    static func list(_ values: [Value]) -> String {
        let shown = values.prefix(10).map { short($0.json) }.joined(separator: ", ")
        return "[" + shown + (values.count > 10 ? ", … \(values.count - 10) more" : "") + "]"
    }

    static func value(of token: Token) -> Value {
        switch token.kind {
        case .string: .string(token.text)
        case .null: .null
        case .trueLiteral: .bool(true)
        case .falseLiteral: .bool(false)
        case .number: Number(text: Array(token.bytes)).map(Value.number) ?? .null
        }
    }

    static func equals(_ token: Token, _ value: Value) -> Bool {
        switch (token.kind, value) {
        case (.string, .string(let text)):
            var text = text
            return text.withUTF8 { utf8 in
                utf8.count == token.bytes.count
                    && (utf8.count == 0
                        || memcmpBytes(UnsafeRawPointer(utf8.baseAddress!), token.bytes.baseAddress!, utf8.count))
            }
        case (.null, .null): return true
        case (.trueLiteral, .bool(let flag)): return flag
        case (.falseLiteral, .bool(let flag)): return !flag
        case (.number, .number(let number)):
            if let small = smallInteger(token), let other = number.small { return small == other }
            guard let mine = Number(text: Array(token.bytes)) else { return false }
            return Number.compare(mine, number) == 0
        default: return false
        }
    }
}
