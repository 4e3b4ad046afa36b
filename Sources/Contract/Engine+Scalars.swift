import Regexp

// The checks of one scalar value against one schema: type, enum/const, numbers, strings.

/// One scalar keyword that failed: what the schema expected and what the value was.
struct ScalarFailure {
    var keyword: String
    var expected: String
    var found: String
}

extension Engine {
    /// Runs `schema`'s scalar keywords on `token`. Violations are recorded when `reporting`, else
    /// the first one is kept in `outcome`.
    mutating func scalarChecks(
        _ schema: Schema, _ token: Token, reporting: Bool, depth: Int, into outcome: inout Outcome
    ) {
        var skipped: [String] = []
        let failures = Self.scalarFailures(schema, token, skipped: &skipped)
        for failure in failures {
            outcome.valid = false
            let violation = Violation(
                pointer: pointer(depth), keyword: failure.keyword, expected: failure.expected, found: failure.found,
                schema: schema.location)
            if reporting {
                verdict.add(violation, keep: options.keep)
            } else if outcome.violation == nil {
                outcome.violation = violation
            }
        }
        for keyword in skipped {
            verdict.notes.append("\(keyword) at \(pointer(depth)) not checked: the number has too many digits")
        }
    }

    /// The scalar keywords of `schema` that `token` fails, in keyword order (`type` alone when
    /// the type is wrong). Pure: the one place these messages are worded, for both engines.
    static func scalarFailures(_ schema: Schema, _ token: Token, skipped: inout [String]) -> [ScalarFailure] {
        if let constant = schema.constant {
            return constant
                ? []
                : [ScalarFailure(keyword: "false", expected: "nothing (the schema is false)", found: describe(token))]
        }
        let types = schema.types
        if types != .all {
            let allowed: Bool
            switch token.kind {
            case .string: allowed = types.contains(.string)
            case .null: allowed = types.contains(.null)
            case .trueLiteral, .falseLiteral: allowed = types.contains(.boolean)
            case .number:
                allowed =
                    types.contains(.number)
                    || (types.contains(.integer)
                        && (types.contains(.integerByForm) ? isWrittenAsInteger(token) : isInteger(token)))
            }
            if !allowed {
                let found = typeName(token, byForm: types.contains(.integerByForm))
                return [ScalarFailure(keyword: "type", expected: typeList(types), found: found)]
            }
        }
        var failures: [ScalarFailure] = []
        if schema.hasEnum {
            let accepted = schema.enumAccepts(token) ?? schema.enumValues!.contains(where: { equals(token, $0) })
            if !accepted {
                failures.append(
                    ScalarFailure(
                        keyword: "enum", expected: "one of \(list(schema.enumValues!))", found: describe(token)))
            }
        }
        if schema.hasConst, let constant = schema.constValue, !equals(token, constant) {
            failures.append(ScalarFailure(keyword: "const", expected: short(constant.json), found: describe(token)))
        }
        switch token.kind {
        case .number where schema.hasNumberChecks: numberFailures(schema, token, into: &failures, skipped: &skipped)
        case .string where schema.hasStringChecks: stringFailures(schema, token, into: &failures)
        default: break
        }
        return failures
    }

    private static func numberFailures(
        _ schema: Schema, _ token: Token, into failures: inout [ScalarFailure], skipped: inout [String]
    ) {
        if let format = schema.format, format.isNumeric {
            let small = smallInteger(token)
            let fits =
                small.map { format.accepts(small: $0) } ?? Number(text: Array(token.bytes)).map { format.accepts($0) }
                ?? false
            if !fits {
                failures.append(
                    ScalarFailure(keyword: "format", expected: "a valid \(format.name)", found: describe(token)))
            }
        }
        // Small integers (ids, counts) against small bounds: no digits array.
        if let value = smallInteger(token), schema.exclusiveMinimum == nil, schema.exclusiveMaximum == nil,
            schema.multipleOf == nil, schema.minimum == nil || schema.minimum?.small != nil,
            schema.maximum == nil || schema.maximum?.small != nil
        {
            if let bound = schema.minimum, value < bound.small! {
                failures.append(ScalarFailure(keyword: "minimum", expected: "≥ \(bound)", found: "\(value)"))
            }
            if let bound = schema.maximum, value > bound.small! {
                failures.append(ScalarFailure(keyword: "maximum", expected: "≤ \(bound)", found: "\(value)"))
            }
            return
        }
        guard let number = Number(text: Array(token.bytes)) else {
            failures.append(
                ScalarFailure(keyword: "type", expected: "a number Sluice can compare", found: describe(token)))
            return
        }
        let text = describe(token)
        if let bound = schema.minimum, Number.compare(number, bound) < 0 {
            failures.append(ScalarFailure(keyword: "minimum", expected: "≥ \(bound)", found: text))
        }
        if let bound = schema.maximum, Number.compare(number, bound) > 0 {
            failures.append(ScalarFailure(keyword: "maximum", expected: "≤ \(bound)", found: text))
        }
        if let bound = schema.exclusiveMinimum, Number.compare(number, bound) <= 0 {
            failures.append(ScalarFailure(keyword: "exclusiveMinimum", expected: "> \(bound)", found: text))
        }
        if let bound = schema.exclusiveMaximum, Number.compare(number, bound) >= 0 {
            failures.append(ScalarFailure(keyword: "exclusiveMaximum", expected: "< \(bound)", found: text))
        }
        if let divisor = schema.multipleOf {
            switch number.isMultiple(of: divisor) {
            case true: break
            case false:
                failures.append(ScalarFailure(keyword: "multipleOf", expected: "a multiple of \(divisor)", found: text))
            case nil: skipped.append("multipleOf")
            }
        }
    }

    private static func stringFailures(_ schema: Schema, _ token: Token, into failures: inout [ScalarFailure]) {
        let minimum = schema.lengthMinimum
        let maximum = schema.lengthMaximum
        if minimum >= 0 || maximum >= 0 {
            let length = codePoints(token, minimum: minimum, maximum: maximum)
            if minimum >= 0, length < minimum {
                failures.append(
                    ScalarFailure(keyword: "minLength", expected: "at least \(minimum) characters", found: "\(length)"))
            }
            if maximum >= 0, length > maximum {
                failures.append(
                    ScalarFailure(keyword: "maxLength", expected: "at most \(maximum) characters", found: "\(length)"))
            }
        }
        guard schema.hasPatternOrFormat else { return }
        if let pattern = schema.pattern {
            switch pattern.search(token.bytes) {
            case .match: break
            case .noMatch, .invalidSubject:
                failures.append(
                    ScalarFailure(
                        keyword: "pattern", expected: "a string matching \(pattern.source)", found: describe(token)))
            case .limitExceeded:
                failures.append(
                    ScalarFailure(
                        keyword: "pattern", expected: "a string matching \(pattern.source)",
                        found: "a string the pattern cannot decide within its match limit"))
            }
        }
        if let format = schema.format, !format.accepts(token.text) {
            failures.append(
                ScalarFailure(keyword: "format", expected: "a valid \(format.name)", found: describe(token)))
        }
    }

    /// A string token's length in code points, counted only when the bytes alone cannot decide
    /// against `minimum` and `maximum` (non-ASCII bytes only shorten it).
    @inline(__always) static func codePoints(_ token: Token, minimum: Int, maximum: Int) -> Int {
        var length = token.bytes.count
        if !token.ascii && (length > maximum || length >= minimum) {
            length = 0
            for byte in token.bytes where byte & 0xC0 != 0x80 { length += 1 }
        }
        return length
    }

    // MARK: - Token helpers

    static func isInteger(_ token: Token) -> Bool {
        for byte in token.bytes where byte == 0x2E || byte | 0x20 == 0x65 {
            return Number(text: Array(token.bytes))?.isInteger ?? false
        }
        return true
    }

    /// Whether a number token has neither a fraction nor an exponent (draft-04's integer).
    static func isWrittenAsInteger(_ token: Token) -> Bool {
        !token.bytes.contains { $0 == 0x2E || $0 | 0x20 == 0x65 }
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

    /// `byForm`: an integer is a number written without fraction or exponent (draft-04's).
    static func typeName(_ token: Token, byForm: Bool = false) -> String {
        switch token.kind {
        case .string: "string"
        case .null: "null"
        case .trueLiteral, .falseLiteral: "boolean"
        case .number: (byForm ? isWrittenAsInteger(token) : isInteger(token)) ? "integer" : "number"
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
