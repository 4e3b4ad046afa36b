import Logging

/// `GET /rules` (each rule's mappings and faults, and whether its faults are on) and
/// `PUT /rules/{name}/faults?enabled=true|false` (until the next reload).
extension AdminRoutes {
    func rules(method: String, parts: [String], query: [String: String]) -> Answer {
        let book = proxy.ruleBook
        let faults = proxy.environment.faults
        if parts.isEmpty {
            guard method == "GET" || method == "HEAD" else {
                return .error(405, "\(method) is not allowed on /rules")
            }
            return .json(
                200,
                .array(
                    (book.rules + [book.defaults]).map { rule in
                        .object([
                            ("name", .string(rule.name)),
                            ("respond", .bool(rule.respond != nil)),
                            ("upstream", .optional(rule.upstream?.label)),
                            ("rewrite", .bool(rule.rewrite != nil)),
                            ("faults", .bool(rule.faults != nil)),
                            ("faults_enabled", .bool(rule.faults != nil && !faults.switchedOff.contains(rule.name))),
                        ])
                    }))
        }
        guard parts.count == 2, parts[1] == "faults" else {
            return .error(404, "try /rules or PUT /rules/{name}/faults?enabled=true|false")
        }
        guard method == "PUT" else {
            return .error(405, "\(method) is not allowed; PUT /rules/{name}/faults?enabled=…")
        }
        let name = AdminConnection.percentDecoded(parts[0])
        guard let rule = (book.rules + [book.defaults]).first(where: { $0.name == name }) else {
            return .error(404, "no rule named \(name)")
        }
        guard rule.faults != nil else { return .error(409, "the rule \(name) has no faults") }
        guard let text = query["enabled"], let enabled = Bool(text) else {
            return .error(400, "say enabled=true or enabled=false")
        }
        faults.setEnabled(enabled, rule: name)
        proxy.logger.notice("faults of rule \(name) switched \(enabled ? "on" : "off") through the admin API")
        return .json(200, .object([("rule", .string(name)), ("faults_enabled", .bool(enabled))]))
    }

    /// Injections so far, by rule and kind.
    func faultCounts() -> JSONValue {
        let counts = proxy.stats.faultsInjected
        return .object(
            counts.keys.sorted().map { rule in
                (rule, .object(FaultKind.allCases.map { ($0.rawValue, .number(counts[rule]?[$0] ?? 0)) }))
            })
    }
}

extension AdminRoutes {
    /// `record:` as it runs: the file, whether it still records, exchanges written and lost.
    func recordingStats() -> JSONValue {
        guard let recorder = proxy.environment.recorder else { return .null }
        let state: JSONValue =
            switch recorder.state {
            case .recording: .string("recording")
            case .stopped(let reason): .string("stopped: " + reason)
            }
        return .object([
            ("file", .string(recorder.path)), ("state", state), ("written", .number(recorder.written)),
            ("dropped", .number(recorder.dropped)),
        ])
    }

    /// `replay:` as it runs: the file, exchanges it holds, requests answered and missed.
    func replayStats() -> JSONValue {
        guard let book = proxy.environment.replayBook else { return .null }
        return .object([
            ("file", .string(book.recording.path)), ("exchanges", .number(book.count)),
            ("served", .number(proxy.stats.replayServed)), ("missed", .number(proxy.stats.replayMissed)),
            ("on_miss", .string(book.settings.onMiss.rawValue)),
        ])
    }
}
