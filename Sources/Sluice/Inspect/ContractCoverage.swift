import Contract
import Foundation

/// What traffic showed of the rules' contracts: per rule, every operation × status seen
/// (exchanges, bodies validated, violations), and the documented ones never seen. The page and
/// `GET /contracts` show it live; `sluice run`, `contract coverage` and `contract report` write
/// it as JUnit, SARIF, Markdown or JSON.
public struct ContractReport: Sendable {
    /// One exchange that broke the contract.
    public struct Failure: Sendable {
        public var url: String
        public var method: String
        /// The status the client got (a 502 when the contract was enforced).
        public var status: Int
        public var direction: Direction
        public var violations: [Violation]
        public var total: Int
    }

    /// One operation × status (or × request) as the traffic exercised it.
    public struct Case: Sendable {
        public var operation: String
        public var method: String
        public var template: String?
        /// `200`, `404`, …, or `request` for the requests' own checks.
        public var status: String
        /// Whether the document describes it: `false` for a request to an operation it does not
        /// have (``operation`` then names the request's method and path) or a status the
        /// operation does not list.
        public var documented = true
        public var seen = 0
        public var validated = 0
        public var failed = 0
        /// The first failures (at most ``ContractReport/keptFailures``), then each later one that
        /// breaks the contract somewhere none of those did (at most as many again): a leak the
        /// sixty-first exchange shows is not hidden behind sixty of another kind.
        public var failures: [Failure] = []
        /// What the kept failures broke: keyword and schema location, each once.
        var brokenPlaces: Set<String> = []
    }

    public struct RuleReport: Sendable {
        public var name: String
        /// The contract file as configured.
        public var contract: String
        public var cases: [Case]
        /// Documented operations and statuses no exchange was checked against.
        public var neverSeen: [(operation: String, statuses: [String])]
        public var operationsTotal: Int
        /// Exchanges checked against this rule's contract, and those that broke it (by their
        /// request, their response or both): one exchange counts once, whatever its cases.
        public var exchanges = 0
        public var brokenExchanges = 0
        public var failed: Int { cases.reduce(0) { $0 + $1.failed } }
        /// Documented operation × status pairs never seen.
        public var neverSeenCount: Int { neverSeen.reduce(0) { $0 + $1.statuses.count } }
    }

    /// Failures kept per case (the rest are counted).
    public static let keptFailures = 50

    /// Query parameters that carry credentials (API keys, tokens, signatures): their values never
    /// reach a report, which CI jobs publish.
    static let credentialParameters: Set<String> = [
        "api_key", "apikey", "api-key", "key", "token", "access_token", "id_token", "refresh_token", "auth",
        "authorization", "password", "passwd", "pwd", "secret", "client_secret", "signature", "sig", "session",
        "sessionid", "session_id", "code", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
    ]

    /// `url` with the values of its credential query parameters (``credentialParameters``, any
    /// case, or any name containing `token`, `secret` or `password`) replaced by `REDACTED`, and
    /// a user-info part dropped.
    public static func redactingCredentials(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://") {
            // The authority ends at the first `/`, `?` or `#`: an `@` after it is no user-info.
            let authorityEnd = text[scheme.upperBound...].firstIndex { "/?#".contains($0) } ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
                text.removeSubrange(scheme.upperBound...at)
            }
        }
        guard let mark = text.firstIndex(of: "?") else { return text }
        let query = text[text.index(after: mark)...]
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let equals = part.firstIndex(of: "=") else { return String(part) }
            let name = (part[..<equals].removingPercentEncoding ?? String(part[..<equals])).lowercased()
            let secret =
                credentialParameters.contains(name) || name.contains("token") || name.contains("secret")
                || name.contains("password")
            return secret ? part[..<equals] + "=REDACTED" : String(part)
        }
        return text[...mark] + parts.joined(separator: "&")
    }

    public var rules: [RuleReport]
    /// The exchanges that broke a contract (by request, response or both: once each).
    public var failedExchanges: Int { rules.reduce(0) { $0 + $1.brokenExchanges } }
    /// The exchanges checked (an exchange whose request and response were checked counts once).
    public var checkedExchanges: Int { rules.reduce(0) { $0 + $1.exchanges } }

    /// Every rule with a contract (or only `rule`), its cases from `coverage`, and what it never saw.
    public init(configuration: Configuration, coverage: ContractCoverage, rule only: String? = nil) {
        let cases = coverage.cases
        rules = configuration.rules.compactMap { rule in
            guard let contract = rule.contract, let loaded = contract.loaded, only == nil || only == rule.name else {
                return nil
            }
            let own = cases.filter { $0.rule == rule.name }.map(\.value)
            var neverSeen: [(String, [String])] = []
            var total = 0
            if case .openAPI(let document) = loaded.kind {
                total = document.operations.count
                for operation in document.operations {
                    let seenKeys = Set(
                        own.filter { $0.method == operation.method && $0.template == operation.template }.compactMap {
                            Int($0.status).flatMap(operation.documentedKey(for:))
                        })
                    let missing = operation.documentedStatuses.filter { !seenKeys.contains($0) }
                    if !missing.isEmpty { neverSeen.append((operation.name, missing)) }
                }
            }
            var report = RuleReport(
                name: rule.name, contract: contract.source.path, cases: own, neverSeen: neverSeen,
                operationsTotal: total)
            let counted = coverage.exchanges(of: rule.name)
            report.exchanges = counted.checked
            report.brokenExchanges = counted.broken
            return report
        }
    }
}

/// Gathers every contract check of the exchanges it sees: an event monitor on the proxy's loop
/// thread (read from other threads: the admin page's, `sluice run`'s), or fed stored and recorded
/// exchanges by ``add(rule:check:failure:url:method:status:)``. Bounded: one entry per rule ×
/// operation × status, the first failures of each.
public final class ContractCoverage: EventMonitor, @unchecked Sendable {
    private let lock = NSLock()
    private var table: [String: (rule: String, value: ContractReport.Case)] = [:]
    private var order: [String] = []
    /// Per rule: exchanges checked, and those broken.
    private var counts: [String: (checked: Int, broken: Int)] = [:]

    /// The most cases kept (rule × operation × status); the rest are counted under one per rule.
    public static let maximumCases = 2000
    /// The most undocumented request paths kept apart per rule (a path with ids in it makes one
    /// each); the rest share one case per method, leaving room for the documented operations.
    public static let maximumUndocumentedPaths = 200
    /// Per rule: the undocumented request paths kept apart so far.
    private var undocumentedPaths: [String: Set<String>] = [:]

    public init() {}

    /// The cases in the order they were first seen.
    public var cases: [(rule: String, value: ContractReport.Case)] {
        lock.withLock { order.map { table[$0]! } }
    }

    /// Exchanges checked against `rule`'s contract, and those that broke it.
    public func exchanges(of rule: String) -> (checked: Int, broken: Int) {
        lock.withLock { counts[rule] ?? (0, 0) }
    }

    public func exchangeDidComplete(_ record: ExchangeRecord) {
        guard let rule = record.rule else { return }
        // An enforced request's failure ends the exchange: it is the record's only failure, and
        // its request the only thing checked.
        let refused = record.contractFailure?.direction == .request
        let request = record.requestContractFailure
        var requestChecked = false
        if !refused, record.requestContractCheck != nil || request != nil {
            requestChecked = addCase(
                rule: rule, check: record.requestContractCheck, failure: request, url: record.url,
                method: record.method, status: record.status, request: true)
        }
        let response = addCase(
            rule: rule, check: refused ? record.requestContractCheck : record.contractCheck,
            failure: record.contractFailure, url: record.url, method: record.method, status: record.status,
            request: refused)
        if requestChecked || response { count(rule, broken: request != nil || record.contractFailure != nil) }
    }

    /// One exchange's contract checks: the response's (`check`), and the failure, if any, of
    /// the response or of the request.
    /// - Parameter status: the status the client got.
    public func add(
        rule: String, check: ContractCheck?, failure: ContractFailure?, url: String, method requestMethod: String,
        status clientStatus: Int
    ) {
        if addCase(rule: rule, check: check, failure: failure, url: url, method: requestMethod, status: clientStatus) {
            count(rule, broken: failure != nil)
        }
    }

    private func count(_ rule: String, broken: Bool) {
        lock.withLock {
            var tally = counts[rule] ?? (0, 0)
            tally.checked += 1
            if broken { tally.broken += 1 }
            counts[rule] = tally
        }
    }

    /// Adds one check to its case; `false` when there was nothing to add.
    /// - Parameter request: `check` is the request's (its case is the operation's `request` row).
    @discardableResult
    private func addCase(
        rule: String, check: ContractCheck?, failure: ContractFailure?, url: String, method requestMethod: String,
        status clientStatus: Int, request: Bool = false
    ) -> Bool {
        guard check != nil || failure != nil else { return false }
        let requestOnly = request || failure?.direction == .request
        let method = check?.method ?? failure?.method ?? requestMethod
        let template = check?.template ?? failure?.template
        let operationId = check?.operationId ?? failure?.operationId
        let status = requestOnly ? "request" : String(check?.status ?? clientStatus)
        // An operation the document does not have is named by the request's path: which ones
        // were called is what coverage shows of them.
        let path = template == nil ? TargetURL(url)?.path ?? url : ""
        let operation =
            template.map { (operationId.map { $0 + " " } ?? "") + "(\(method) \($0))" }
            ?? "\(method) \(path) (undocumented)"
        let undocumented = (check?.undocumented ?? []) + (failure?.violations ?? [])
        let documented =
            template != nil
            && !undocumented.contains { $0.keyword == "undocumented-status" || $0.keyword == "undocumented-operation" }
        var key = [rule, method, template ?? path, status].joined(separator: "\u{1F}")
        lock.withLock {
            // Bounded: a schema contract's operations are its request paths; past the limit, new
            // ones share one case per rule.
            var operation = operation
            if table[key] == nil, template == nil, undocumentedPaths[rule]?.contains(path) != true {
                if undocumentedPaths[rule, default: []].count >= Self.maximumUndocumentedPaths {
                    key = [rule, method, "(more)", status].joined(separator: "\u{1F}")
                    operation = "\(method) (more undocumented paths than coverage keeps)"
                } else if order.count < Self.maximumCases {
                    undocumentedPaths[rule, default: []].insert(path)
                }
            }
            if table[key] == nil && order.count >= Self.maximumCases {
                key = rule + "\u{1F}(more)"
                operation = "(more operations than coverage keeps)"
            }
            var entry =
                table[key]?.value
                ?? ContractReport.Case(
                    operation: operation, method: method, template: template, status: status, documented: documented)
            if table[key] == nil { order.append(key) }
            entry.seen += 1
            if check?.bodyValidated == true { entry.validated += 1 }
            if let failure {
                entry.failed += 1
                let places = failure.violations.map { $0.keyword + "\u{1F}" + $0.schema }
                let first = entry.failures.count < ContractReport.keptFailures
                let new =
                    entry.failures.count < 2 * ContractReport.keptFailures
                    && places.contains { !entry.brokenPlaces.contains($0) }
                if first || new {
                    entry.failures.append(
                        ContractReport.Failure(
                            url: ContractReport.redactingCredentials(url), method: requestMethod, status: clientStatus,
                            direction: failure.direction, violations: failure.violations, total: failure.total))
                    entry.brokenPlaces.formUnion(places)
                }
            }
            table[key] = (rule, entry)
        }
        return true
    }
}

extension ContractReport {
    /// The report as JSON (`GET /contracts`, `--format json`): per rule, the cases seen with their
    /// first failures, and the documented responses never seen.
    public var json: JSONValue {
        .object([
            ("checked", .number(checkedExchanges)), ("broken", .number(failedExchanges)),
            ("rules", .array(rules.map(Self.json))),
        ])
    }

    static func json(_ rule: RuleReport) -> JSONValue {
        .object([
            ("name", .string(rule.name)), ("contract", .string(rule.contract)),
            ("operations", .number(rule.operationsTotal)),
            (
                "seen",
                .array(
                    rule.cases.map { item in
                        .object([
                            ("operation", .string(item.operation)), ("method", .string(item.method)),
                            ("path", .optional(item.template)), ("status", .string(item.status)),
                            ("documented", .bool(item.documented)),
                            ("exchanges", .number(item.seen)), ("validated", .number(item.validated)),
                            ("broken", .number(item.failed)), ("failures", .array(item.failures.map(Self.json))),
                        ])
                    })
            ),
            (
                "never_seen",
                .array(
                    rule.neverSeen.map {
                        .object([("operation", .string($0.operation)), ("statuses", .strings($0.statuses))])
                    })
            ),
        ])
    }

    static func json(_ failure: Failure) -> JSONValue {
        .object([
            ("url", .string(failure.url)), ("method", .string(failure.method)), ("status", .number(failure.status)),
            ("direction", .string(failure.direction == .response ? "response" : "request")),
            ("violations_total", .number(failure.total)),
            ("violations", .array(failure.violations.map { .object($0.fields.map { ($0.0, .string($0.1)) }) })),
        ])
    }
}
