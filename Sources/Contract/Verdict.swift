/// One broken promise: where in the instance, which keyword, what the schema expected and what
/// was there, and which schema said so.
public final class Violation: Sendable, CustomStringConvertible {
    /// JSON Pointer into the instance (`/items/3/price`; `` for the whole body).
    public let pointer: String
    /// The keyword (`type`, `required`, …) or a Sluice check (`json`, `max-depth`,
    /// `undocumented-status`, …).
    public let keyword: String
    public let expected: String
    public let found: String
    /// Where the keyword is (`#/components/schemas/Item/properties/price`).
    public let schema: String

    public init(pointer: String, keyword: String, expected: String, found: String, schema: String) {
        self.pointer = pointer
        self.keyword = keyword
        self.expected = expected
        self.found = found
        self.schema = schema
    }

    public var description: String {
        "\(place): \(keyword): expected \(expected), found \(found)"
    }

    /// The pointer as people read it: `(root)` for the whole value (`/` would name the member
    /// whose name is empty, RFC 6901).
    public var place: String { pointer.isEmpty ? "(root)" : pointer }

    /// Its members as written in problem bodies, `/events` and the CLI's JSON, in that order.
    public var fields: [(String, String)] {
        [("pointer", pointer), ("keyword", keyword), ("expected", expected), ("found", found), ("schema", schema)]
    }
}

/// The outcome of validating one body (or one request or response).
public struct Verdict: Sendable {
    /// The first violations, in document order (at most the validator's `keep`).
    public var violations: [Violation] = []
    /// How many there were in all.
    public var total = 0
    /// Checks that could not be made (a value too large to keep for `uniqueItems`, say).
    public var notes: [String] = []

    public init() {}

    public var passed: Bool { total == 0 }

    public mutating func add(_ violation: Violation, keep: Int = 20) {
        total += 1
        if violations.count < keep { violations.append(violation) }
    }

    public mutating func merge(_ other: Verdict, keep: Int = 20) {
        for violation in other.violations where violations.count < keep { violations.append(violation) }
        total += other.total
        // Each note once, and no more than `keep` (an endless stream's items must not grow them).
        for note in other.notes where notes.count < keep && !notes.contains(note) { notes.append(note) }
    }
}

/// Which way a message goes: OpenAPI lifts `required` for `readOnly` properties in requests and
/// for `writeOnly` ones in responses.
public enum Direction: Sendable {
    case request, response
}
