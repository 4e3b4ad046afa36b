import Contract

/// A broken contract: the rule, which way (request or response), the operation, and the
/// violations (the first 20, and how many in all).
public struct ContractFailure: Sendable, Equatable {
    public var rule: String
    public var direction: Direction
    public var operationId: String?
    public var method: String
    public var template: String?
    public var violations: [Violation]
    public var total: Int

    public static func == (lhs: ContractFailure, rhs: ContractFailure) -> Bool {
        lhs.rule == rhs.rule && lhs.total == rhs.total
            && lhs.violations.map(\.description) == rhs.violations.map(\.description)
    }

    /// `The response to getPet (GET /pets/{petId}) breaks the contract: 2 violations; first: /bark: enum: …`.
    public var detail: String {
        let what = direction == .response ? "The response to" : "The request for"
        // An operation the document does not describe: the request its violation names.
        let operation =
            operationId.map { "\($0) (\(method) \(template ?? ""))" } ?? template.map { "\(method) \($0)" }
            ?? violations.first { $0.keyword == "undocumented-operation" }?.found ?? method
        let first = violations.first.map { "; first: \($0.description)" } ?? ""
        return
            "\(what) \(operation) breaks the contract of rule \(rule): \(total) violation\(total == 1 ? "" : "s")\(first)"
    }

    /// One short field for the access log: `2:/items/3/price:type,/total:minimum`.
    public var logField: String {
        "\(total):"
            + violations.prefix(3).map { "\($0.place):\($0.keyword)" }.joined(
                separator: ",")
    }

    func problemMembers(url: String?) -> [(String, ProblemValue)] {
        var operation: [(String, ProblemValue)] = [("method", .string(method))]
        operation.insert(("operationId", operationId.map(ProblemValue.string) ?? .null), at: 0)
        operation.append(("path", template.map(ProblemValue.string) ?? .null))
        return [
            ("rule", .string(rule)), ("url", url.map(ProblemValue.string) ?? .null), ("operation", .object(operation)),
            ("violations", .array(violations.map(ContractFailure.json))), ("violations_total", .number(total)),
        ]
    }

    static func json(_ violation: Violation) -> ProblemValue {
        .object(violation.fields.map { ($0.0, .string($0.1)) })
    }

    /// The same list for the event stream and the page.
    var jsonValue: JSONValue {
        .object([
            ("rule", .string(rule)), ("direction", .string(direction == .response ? "response" : "request")),
            ("operation", .optional(operationId)), ("method", .string(method)), ("path", .optional(template)),
            ("violations_total", .number(total)),
            ("violations", .array(violations.map { .object($0.fields.map { ($0.0, .string($0.1)) }) })),
        ])
    }
}

/// What a contract checked of one exchange's response, whatever the outcome: the operation and
/// status it was checked as (for coverage and reports: `sluice run`, `contract coverage`).
public struct ContractCheck: Sendable {
    public var rule: String
    /// The operation's `operationId`, when it has one.
    public var operationId: String?
    public var method: String
    /// The path template (`/pets/{petId}`), or the request path for a schema contract; `nil`
    /// when the document has no operation for the request.
    public var template: String?
    /// The status the origin (or the cache) answered with.
    public var status: Int
    /// Whether the body was validated against a schema.
    public var bodyValidated: Bool
    /// Parts of the response the document does not describe (`undocumented-status`, …).
    public var undocumented: [Violation]
}

extension ContractRun {
    /// The record of this (response) check for the exchange's monitors.
    var record: ContractCheck {
        ContractCheck(
            rule: rule, operationId: check.operationId, method: method, template: check.template, status: status,
            bodyValidated: validatesBody && skipped == nil, undocumented: check.undocumented)
    }
}
