// The branches of `anyOf` and `oneOf`: which failed branch explains a value that none fits.

extension Engine {
    /// A branch of an `anyOf` or `oneOf` failed: with a discriminator its violation is kept for
    /// the branch the value names; else, for a reported verdict, the closest so far. `depth`: the
    /// value's (segments of its pointer).
    @inline(never)
    mutating func branchFailed(_ parent: Int, _ branch: Int, _ violation: Violation?, oneOf: Bool, depth: Int) {
        if slots[parent].schema.discriminator != nil {
            extra(parent).branchViolations[branch] = violation
        } else if slots[parent].reporting, let violation,
            oneOf ? slots[parent].oneOfValid == 0 && slots[parent].schema.anyOf.isEmpty : slots[parent].anyOfValid == 0
        {
            keepClosest(parent, violation, valueDepth: depth)
        }
    }

    /// A failing branch of an `anyOf` (or, on a schema without one, a `oneOf`) whose verdict is
    /// reported (none matched so far): kept when it says more than the one kept before
    /// (``closeness(_:valueDepth:)``; on a tie, the first stays). Kept in the slot's own
    /// `violation`, which a reporting slot does not use otherwise (its violations are recorded as
    /// they come): nothing is allocated.
    @inline(never)
    mutating func keepClosest(_ parent: Int, _ violation: Violation, valueDepth: Int) {
        if let old = slots[parent].violation {
            let (was, now) = (
                Self.closeness(old, valueDepth: valueDepth), Self.closeness(violation, valueDepth: valueDepth)
            )
            guard now.kind > was.kind || (now.kind == was.kind && now.depth > was.depth) else { return }
        }
        slots[parent].violation = violation
    }

    /// Whether an `enum` violation's expectation (``list(_:)``'s `one of [a, b]`) lists one value.
    static func namesOneValue(_ expected: String) -> Bool {
        expected.hasPrefix("one of [") && !expected.contains(", ")
    }

    /// How much a failed branch says of why the value fails, as a person reading it would judge
    /// (as jsonschema's `best_match` does, with what a branch's first violation tells): weakest,
    /// a branch of another type (`{type: null}` beside a date); then a `const` the value or
    /// one of its members does not take (a tagged union's other variants: `object:
    /// "bank_account"` for a card); then a shape that differs at the value itself (a member the branch does not allow,
    /// one it requires); strongest, a value of the branch's shape that breaks one of its rules
    /// (a format, a length, a member of the wrong type). At the same kind, the deeper violation
    /// got further into the value.
    static func closeness(_ violation: Violation, valueDepth: Int) -> (kind: Int, depth: Int) {
        let depth = violation.pointer.utf8.count { $0 == UInt8(ascii: "/") }
        let relative = depth - valueDepth
        let kind: Int
        switch violation.keyword {
        case "type" where relative <= 0: kind = 0
        case "const" where relative <= 1, "enum" where relative <= 1 && Self.namesOneValue(violation.expected):
            kind = 1  // a tag (OpenAPI 3.0 writes it as a one-value enum): the value names another variant
        case "required" where relative <= 0: kind = 2
        case "additionalProperties" where relative <= 1, "unevaluatedProperties" where relative <= 1: kind = 2
        default: kind = 3
        }
        return (kind, depth)
    }

    /// `; closest: /pointer keyword: expected …, found …` of the branch kept, or nothing.
    @inline(never)
    func closest(_ index: Int) -> String {
        guard slots[index].reporting, let violation = slots[index].violation else { return "" }
        return "; closest: \(violation.place) \(violation.keyword): expected "
            + "\(violation.expected), found \(violation.found)"
    }
}
