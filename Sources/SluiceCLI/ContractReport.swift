import Contract
import Foundation
import Sluice

/// What a run's traffic showed of its rules' contracts: per rule, every operation × status seen
/// (exchanges, bodies validated, violations), and the documented ones never seen. Written as
/// JUnit, SARIF, Markdown or JSON (`ContractReport+Formats.swift`).
struct ContractReport {
    /// One exchange that broke the contract.
    struct Failure {
        var url: String
        var method: String
        /// The status the client got (a 502 when the contract was enforced).
        var status: Int
        var direction: Direction
        var violations: [Violation]
        var total: Int
    }

    /// One operation × status (or × request) as the traffic exercised it.
    struct Case {
        var operation: String
        var method: String
        var template: String?
        /// `200`, `404`, …, or `request` for the requests' own checks.
        var status: String
        var seen = 0
        var validated = 0
        var failed = 0
        /// The first failures (at most ``ContractReport/keptFailures``).
        var failures: [Failure] = []
    }

    struct RuleReport {
        var name: String
        /// The contract file as configured.
        var contract: String
        var cases: [Case]
        /// Documented operations and statuses no exchange was checked against.
        var neverSeen: [(operation: String, statuses: [String])]
        var operationsTotal: Int
        var failed: Int { cases.reduce(0) { $0 + $1.failed } }
        /// Documented operation × status pairs never seen.
        var neverSeenCount: Int { neverSeen.reduce(0) { $0 + $1.statuses.count } }
    }

    static let keptFailures = 50

    var rules: [RuleReport]
    /// The exchanges that broke a contract.
    var failedExchanges: Int { rules.reduce(0) { $0 + $1.failed } }
    var checkedExchanges: Int { rules.reduce(0) { $0 + $1.cases.reduce(0) { $0 + $1.seen } } }

    /// Every rule with a contract, its cases from `collector`, and what it never saw.
    init(configuration: Configuration, collector: ContractCollector) {
        let cases = collector.cases
        rules = configuration.rules.compactMap { rule in
            guard let contract = rule.contract, let loaded = contract.loaded else { return nil }
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
            return RuleReport(
                name: rule.name, contract: contract.source.path, cases: own, neverSeen: neverSeen,
                operationsTotal: total)
        }
    }
}

/// Gathers every contract check of the exchanges it sees (an event monitor on the proxy's loop
/// thread; read after the proxy stopped). Bounded: one entry per rule × operation × status,
/// the first failures of each.
final class ContractCollector: EventMonitor, @unchecked Sendable {
    private let lock = NSLock()
    private var table: [String: (rule: String, value: ContractReport.Case)] = [:]
    private var order: [String] = []

    /// The cases in the order they were first seen.
    var cases: [(rule: String, value: ContractReport.Case)] {
        lock.withLock { order.map { table[$0]! } }
    }

    func exchangeDidComplete(_ record: ExchangeRecord) {
        guard let rule = record.rule, record.contractCheck != nil || record.contractFailure != nil else { return }
        let check = record.contractCheck
        let failure = record.contractFailure
        let requestOnly = failure?.direction == .request
        let method = check?.method ?? failure?.method ?? record.method
        let template = requestOnly ? failure?.template : (check?.template ?? failure?.template)
        let operationId = requestOnly ? failure?.operationId : (check?.operationId ?? failure?.operationId)
        let status = requestOnly ? "request" : String(check?.status ?? record.status)
        let operation =
            template.map { (operationId.map { $0 + " " } ?? "") + "(\(method) \($0))" } ?? "\(method) (undocumented)"
        let key = [rule, method, template ?? "", status].joined(separator: "\u{1F}")
        lock.withLock {
            var entry =
                table[key]?.value
                ?? ContractReport.Case(operation: operation, method: method, template: template, status: status)
            if table[key] == nil { order.append(key) }
            entry.seen += 1
            if check?.bodyValidated == true && !requestOnly { entry.validated += 1 }
            if let failure {
                entry.failed += 1
                if entry.failures.count < ContractReport.keptFailures {
                    entry.failures.append(
                        ContractReport.Failure(
                            url: record.url, method: record.method, status: record.status, direction: failure.direction,
                            violations: failure.violations, total: failure.total))
                }
            }
            table[key] = (rule, entry)
        }
    }
}

/// Where a violated schema keyword is written: the file and line SARIF points code review at.
struct SchemaPlaces {
    private var documents: [String: (document: SourceDocument, lines: [Substring])?] = [:]

    /// The place of `violation`'s keyword in the contract at `contractPath`: its `schema`
    /// (`#/…`, `schemas/item.yaml#/…` beside the contract, or an absolute URI) and keyword.
    mutating func place(of violation: Violation, contractPath: String) -> (path: String, line: Int?) {
        let location = violation.schema
        guard let hash = location.firstIndex(of: "#") else { return (contractPath, nil) }
        let file = String(location[..<hash])
        let pointer = String(location[location.index(after: hash)...])
        let path: String
        if file.isEmpty {
            path = contractPath
        } else if file.hasPrefix("file://") {
            path = String(file.dropFirst(7))
        } else if file.contains("://") {
            return (file, nil)
        } else {
            path = (contractPath as NSString).deletingLastPathComponent + "/" + file
        }
        if documents[path] == nil {
            let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
            documents[path] = text.flatMap { text in
                (try? SourceDocument.read(text: text, uri: "file://" + path)).map {
                    ($0, text.split(separator: "\n", omittingEmptySubsequences: false))
                }
            }
        }
        guard let (document, lines) = documents[path] ?? nil else { return (path, nil) }
        guard let objectLine = document.line(of: pointer) else { return (path, nil) }
        let keyword = violation.keyword
        guard document.root.resolve(pointer: pointer + "/" + Value.escape(keyword)) != nil else {
            return (path, objectLine)
        }
        // Lines are kept for objects and arrays; a keyword's own line is found from its object's.
        for index in (objectLine - 1)..<min(lines.count, objectLine + 200) where index >= 0 {
            if Self.names(keyword, in: lines[index]) { return (path, index + 1) }
        }
        return (path, objectLine)
    }

    /// Whether `line` holds `keyword` as a YAML or JSON member name.
    private static func names(_ keyword: String, in line: Substring) -> Bool {
        if line.contains("\"\(keyword)\"") || line.contains("'\(keyword)'") { return true }
        guard let range = line.range(of: keyword + ":") else { return false }
        guard range.lowerBound > line.startIndex else { return true }
        let before = line[line.index(before: range.lowerBound)]
        return before == " " || before == "{" || before == "," || before == "-"
    }
}
