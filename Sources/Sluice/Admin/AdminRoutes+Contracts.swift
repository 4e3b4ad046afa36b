import Contract

/// The contracts' answers: `GET /contracts` (coverage) and `/stats`' contract counts (the
/// start-up line's counts per rule, and the checks since).
extension AdminRoutes {
    /// Coverage of the contracts by the traffic since the start (`?rule=` one rule's).
    func contractCoverage(rule: String?) -> JSONValue {
        ContractReport(configuration: proxy.configuration, coverage: proxy.contractCoverage, rule: rule).json
    }

    /// Contract checks in all and per rule, with what each rule's document can check (the
    /// counts of the start-up line).
    func contractStats() -> JSONValue {
        let stats = proxy.stats
        let rules: [JSONValue] = proxy.configuration.rules.compactMap { rule in
            guard let contract = rule.contract, let loaded = contract.loaded else { return nil }
            let summary = loaded.summary
            let tally = stats.contractsByRule[rule.name] ?? Stats.ContractTally()
            let kind: String =
                switch loaded.kind {
                case .openAPI: "openapi"
                case .schema: "schema"
                }
            return .object([
                ("rule", .string(rule.name)), ("file", .string(contract.source.path)), ("kind", .string(kind)),
                ("mode", .string(contract.onViolation.rawValue)), ("operations", .number(summary.operations)),
                ("with_response_schemas", .number(summary.withResponseSchemas)),
                ("warnings", .number(summary.warnings)), ("checked", .number(tally.checked)),
                ("failed", .number(tally.failed)), ("rejected", .number(tally.rejected)),
            ])
        }
        return .object([
            ("checked", .number(stats.contractChecked)), ("failed", .number(stats.contractFailed)),
            ("rejected", .number(stats.contractRejected)), ("rules", .array(rules)),
        ])
    }
}
