import ArgumentParser
import Contract
import Foundation
import Sluice

/// `sluice contract coverage` and `sluice contract report`: which operations × statuses traffic
/// exercised and what broke, from the running proxy, the cache or a recording.
extension ContractCommand {
    /// Where the exchanges come from when not from the running proxy.
    struct ExchangeSource: ParsableArguments {
        @Option(help: "A recording (sluice serve --record FILE, or record import).") var recording: String?
        @Flag(help: "The responses stored in the cache.") var cache = false

        var isOffline: Bool { recording != nil || cache }

        func validate() throws {
            if recording != nil && cache { throw ValidationError("give --recording FILE or --cache, not both") }
        }
    }

    /// Checks every stored (or recorded) response of a rule with a contract, by the checks the
    /// proxy runs on one that passes through.
    /// - Note: a recording holds what the client got: an enforced contract's 502 problem, or a
    ///   body with its nulls stripped, is checked as such.
    static func gather(
        _ source: ExchangeSource, configuration: Configuration, rule only: String?, options: ConfigOptions
    ) throws -> ContractCoverage {
        let rules = configuration.rules.filter { $0.contract?.loaded != nil && (only == nil || $0.name == only) }
        guard !rules.isEmpty else {
            throw CommandFailure.failed(only.map { "no rule \($0) with a contract" } ?? "no rule has a contract")
        }
        let coverage = ContractCoverage()
        let limit = configuration.limits.maxTransformBody
        var progress = Progress()
        func feed(method: String, url: String, status: Int, headers: HTTPFields, body: () throws -> [UInt8]) rethrows {
            guard let target = TargetURL(url),
                let owner = rules.first(where: {
                    $0.match.matches(method: method, host: target.host, path: target.path)
                })
            else { return }
            let head = ResponseHead(status: status, headers: headers)
            guard
                let (check, failure) = owner.contractVerdict(
                    of: head, method: method, url: target, body: try body(), limit: limit)
            else { return }
            coverage.add(rule: owner.name, check: check, failure: failure, url: url, method: method, status: status)
        }
        if let path = source.recording {
            let recording: Recording
            do {
                recording = try Recording.open(path)
            } catch {
                throw CommandFailure.noInput("\(error)")
            }
            let exchanges = try recording.exchanges(bodies: true)
            for (index, exchange) in exchanges.enumerated() {
                progress.show("read \(index) of \(exchanges.count) recorded exchanges")
                var headers = HTTPFields()
                for field in exchange.responseHeaders { headers.append(name: field.name, value: field.value) }
                feed(method: exchange.method, url: exchange.url, status: exchange.status, headers: headers) {
                    exchange.responseBody
                }
            }
        } else {
            guard FileManager.default.fileExists(atPath: configuration.cache.path) else {
                throw CommandFailure.noInput(
                    "no cache at \(configuration.cache.path) (cache.path): \(options.elsewhereHint)")
            }
            let inspector = try CacheInspector(settings: configuration.cache, writable: false)
            var filter = CacheInspector.Filter()
            filter.limit = 1_000_000
            let entries = try inspector.list(filter, now: Date().timeIntervalSince1970)
            for (index, entry) in entries.enumerated() {
                progress.show("read \(index) of \(entries.count) stored responses")
                try feed(method: entry.method, url: entry.url, status: entry.status, headers: entry.headers) {
                    var body: [UInt8] = []
                    _ = try inspector.body(of: entry.id) { body.append(contentsOf: $0) }
                    return body
                }
            }
        }
        progress.done()
        return coverage
    }

    // MARK: - coverage

    struct Coverage: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per rule, every operation × documented status: seen, validated, broken, never seen.",
            discussion: """
                From the running proxy (its admin port), or with --cache or --recording FILE from \
                what was stored or recorded.
                  sluice contract coverage --config sluice.yaml
                  sluice contract coverage --recording run.sqlite --rule shop --json
                """)

        @OptionGroup var options: ConfigOptions
        @OptionGroup var source: ExchangeSource
        @OptionGroup var admin: AdminAddress
        @Option(help: "Only this rule.") var rule: String?
        @Flag(help: "The coverage as JSON (the admin API's GET /contracts).") var json = false

        func run() throws {
            let (configuration, _) = try options.load()
            let text: String
            if source.isOffline {
                let coverage = try ContractCommand.gather(
                    source, configuration: configuration, rule: rule, options: options)
                text = ContractReport(configuration: configuration, coverage: coverage, rule: rule).json.json
            } else {
                let client = try admin.client(configuration)
                let query = rule.map {
                    "?rule=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)
                }
                let (status, answer) = try client.call("GET", "/contracts" + (query ?? ""))
                guard status == 200, let answer else {
                    throw CommandFailure.failed("the running proxy answered \(status) to GET /contracts")
                }
                try Self.checkSameContracts(
                    answer, configuration: configuration, rule: rule, at: client.base,
                    comparingFiles: admin.address == nil)
                text = String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self)
            }
            if json {
                print(text)
                return
            }
            guard let object = try? Value.parse(Array(text.utf8)) else {
                throw CommandFailure.failed("the coverage is not JSON")
            }
            print(Self.table(object), terminator: "")
        }

        /// Refuses a coverage from a proxy that does not run this configuration's contracts (its
        /// admin address answered, but for another `--config`): a pipeline reading "0 broken"
        /// from the wrong proxy would pass. Each rule with a contract here (or `rule`) must be
        /// there, with the same file when `comparingFiles` (the address came from this
        /// configuration: the same machine; a proxy named by `--admin` may be in a container that
        /// mounts the files elsewhere), and a proxy checking no contract at all is no coverage.
        static func checkSameContracts(
            _ answer: Any, configuration: Configuration, rule: String?, at address: String, comparingFiles: Bool
        ) throws {
            let listed = ((answer as? [String: Any])?["rules"] as? [[String: Any]]) ?? []
            var theirs: [String: String] = [:]
            for item in listed {
                if let name = item["name"] as? String { theirs[name] = item["contract"] as? String ?? "" }
            }
            let ours = configuration.rules.filter { $0.contract != nil && (rule == nil || $0.name == rule) }
            let differing = ours.filter { mine in
                guard let file = theirs[mine.name] else { return true }
                return comparingFiles && file != mine.contract?.source.path
            }
            let hint =
                "is it running this configuration? Give its admin address with --admin HOST:PORT, or its --config"
            if !differing.isEmpty {
                let running =
                    theirs.isEmpty
                    ? "checks no contract"
                    : "checks "
                        + theirs.sorted { $0.key < $1.key }.map { "rule \($0.key) (\($0.value))" }
                        .joined(separator: ", ")
                let names = differing.map { "rule \($0.name) (\($0.contract?.source.path ?? ""))" }
                throw CommandFailure.failed(
                    "the proxy at \(address) \(running), not \(names.joined(separator: ", ")): \(hint)")
            }
            if let rule, theirs[rule] == nil {
                throw CommandFailure.failed("the proxy at \(address) has no rule \(rule) with a contract: \(hint)")
            }
            if theirs.isEmpty { throw CommandFailure.failed("the proxy at \(address) checks no contract: \(hint)") }
        }

        /// One block per rule: the operations × statuses seen, then those never seen.
        static func table(_ report: Value) -> String {
            var out = ""
            let rules = report["rules"]?.items ?? []
            if rules.isEmpty { return "no rule has a contract\n" }
            for rule in rules {
                let name = rule["name"]?.string ?? "?"
                out += "rule \(name): \(rule["contract"]?.string ?? "")\n"
                let seen = rule["seen"]?.items ?? []
                if seen.isEmpty { out += "  nothing seen yet\n" }
                for item in seen {
                    let broken = item["broken"]?.number?.description ?? "0"
                    // UNDOC: an operation the document does not have, or a status it does not list.
                    let mark = item["documented"]?.bool == false ? "UNDOC " : "SEEN  "
                    out += "  \(mark)  \(item["status"]?.string ?? "?")  \(item["operation"]?.string ?? "?")"
                    out += "  exchanges \(item["exchanges"]?.number?.description ?? "0"),"
                    out += " validated \(item["validated"]?.number?.description ?? "0"), broken \(broken)\n"
                }
                for item in rule["never_seen"]?.items ?? [] {
                    let statuses = (item["statuses"]?.items ?? []).compactMap(\.string).joined(separator: ", ")
                    out += "  NEVER   \(statuses)  \(item["operation"]?.string ?? "?")\n"
                }
            }
            let checked = report["checked"]?.number?.description ?? "0"
            let broken = report["broken"]?.number?.description ?? "0"
            return out + "\(checked) exchanges checked, \(broken) broke a contract\n"
        }
    }

    // MARK: - report

    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write sluice run's report after the fact, from the cache or a recording.",
            discussion: """
                  sluice contract report --recording run.sqlite --format junit --output contracts.xml
                  sluice contract report --cache --format markdown >> "$GITHUB_STEP_SUMMARY"
                """)

        @OptionGroup var options: ConfigOptions
        @OptionGroup var source: ExchangeSource
        @Option(help: "Only this rule.") var rule: String?
        @Option(help: "junit, sarif, markdown or json (default: from --output's name, else markdown).") var format:
            String?
        @Option(help: "The file to write (default: standard output).") var output: String?
        @Option(
            name: .customLong("fail-on"), help: "never (default), or violations: exit 1 when a contract was broken.")
        var failOn = "never"

        func validate() throws {
            guard source.isOffline else { throw ValidationError("give --recording FILE or --cache") }
            if let format, ContractReport.Format(rawValue: format) == nil {
                throw ValidationError("--format is junit, sarif, markdown or json")
            }
            guard failOn == "violations" || failOn == "never" else {
                throw ValidationError("--fail-on is violations or never")
            }
        }

        func run() throws {
            let (configuration, _) = try options.load()
            let coverage = try ContractCommand.gather(
                source, configuration: configuration, rule: rule, options: options)
            let report = ContractReport(configuration: configuration, coverage: coverage, rule: rule)
            let chosen =
                format.flatMap(ContractReport.Format.init(rawValue:)) ?? output.flatMap(
                    ContractReport.Format.init(fileName:))
                ?? .markdown
            let text = report.text(chosen)
            if let output {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output))
                } catch {
                    throw CommandFailure.failed("cannot write \(output): \(error)")
                }
            } else {
                print(text, terminator: "")
            }
            if failOn == "violations" && report.failedExchanges > 0 { throw ExitCode(1) }
        }
    }
}
