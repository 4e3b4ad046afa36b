import ArgumentParser
import Codec
import Contract
import Foundation
import Sluice

/// `sluice contract …`: the contract engine for scripts and for what the cache already holds.
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Validate bodies against API contracts, check the cache against them, infer schemas from it.",
        subcommands: [Validate.self, Check.self, Infer.self, Lint.self, Coverage.self, Report.self])

    /// Progress on a terminal, nothing in a pipe (standard error).
    struct Progress {
        let enabled = isatty(2) == 1
        var last = 0.0

        mutating func show(_ text: String, force: Bool = false) {
            guard enabled else { return }
            let now = Date().timeIntervalSince1970
            guard force || now - last > 0.1 else { return }
            last = now
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        }

        func done() {
            guard enabled else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
    }

    static func violationJSON(_ violation: Violation) -> Value {
        .object(violation.fields.map { ($0.0, .string($0.1)) })
    }

    // MARK: - lint

    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say what of a contract cannot be checked, and why; exit 1 when it does not load.",
            discussion: """
                Each finding is `severity: file:line #pointer: message`: `warning` for parts read \
                leniently or ignored, `unchecked` for parts read but not checkable (a JSON response \
                without a schema, a schema on a body that is not JSON), `error` when the document \
                cannot be loaded (then nothing of it is checked); with --examples, `example` for an \
                example of a JSON body that breaks its own schema (then exit 1).
                  sluice contract lint openapi.yaml
                  sluice contract lint --examples openapi.yaml
                  sluice contract lint --json openapi.yaml | jq '.findings[] | select(.severity == "warning")'
                """)

        @Option(name: .customLong("ref"), help: "Map a remote $ref to a local file: URI=FILE (repeatable).")
        var refs: [String] = []
        @Flag(help: "The file is a JSON Schema (a rule's `contract: {schema: …}`), not an OpenAPI document.")
        var schema = false
        @Flag(help: "Check the document's examples of JSON bodies against their schemas; exit 1 when one breaks.")
        var examples = false
        @Flag(help: "The findings as JSON.") var json = false
        @Argument(
            help: "An OpenAPI 3.0, 3.1 or 3.2 (or Swagger 2.0) document (YAML or JSON), or a JSON Schema with --schema."
        ) var file: String

        func run() throws {
            let mapping = try ContractCommand.refMapping(refs)
            var findings: [LintFinding] = []
            var summary: ContractSummary?
            do throws(ContractError) {
                if schema {
                    // A schema has no operations: it loads (every $ref found, every keyword
                    // understood) or it does not, with every error said.
                    _ = try SchemaValidator.load(file: file, refs: mapping)
                    summary = ContractSummary(operations: 0, withResponseSchemas: 0, warnings: 0)
                } else {
                    let document = try OpenAPIContract.load(file: file, refs: mapping)
                    summary = document.summary
                    findings = document.findings
                    if examples { findings += document.exampleFindings }
                }
            } catch {
                findings = ([error] + error.others).map { LintFinding(severity: .error, $0) }
            }
            if json {
                var members: [(String, Value)] = [("file", .string(file)), ("loaded", .bool(summary != nil))]
                if let summary, !schema {
                    members += [
                        ("operations", .number(Number(summary.operations))),
                        ("with_response_schemas", .number(Number(summary.withResponseSchemas))),
                        ("warnings", .number(Number(summary.warnings))),
                    ]
                }
                members.append(("findings", .array(findings.map(Self.json))))
                print(Value.object(members).pretty())
            } else {
                for finding in findings { print(finding) }
                if schema, summary != nil {
                    print("\(file): JSON Schema, loads")
                } else if let summary {
                    let unchecked = findings.filter { $0.severity == .unchecked }.count
                    let broken = findings.filter { $0.severity == .example }.count
                    let checked =
                        examples
                        ? ", \(broken) example\(broken == 1 ? "" : "s") breaking \(broken == 1 ? "its" : "their") schema"
                        : ""
                    print("\(file): \(summary.description), \(unchecked) unchecked\(checked)")
                }
            }
            if summary == nil || findings.contains(where: { $0.severity == .example }) { throw ExitCode(1) }
        }

        static func json(_ finding: LintFinding) -> Value {
            var members: [(String, Value)] = [("severity", .string(finding.severity.rawValue))]
            if let place = finding.place {
                members.append(("file", .string(place.path)))
                if let line = place.line { members.append(("line", .number(Number(line)))) }
                members.append(("pointer", .string(place.pointer)))
            }
            members.append(("message", .string(finding.message)))
            return .object(members)
        }
    }

    /// `--ref URI=FILE` options as the loader's map (relative files from the working directory).
    static func refMapping(_ options: [String]) throws -> [String: String] {
        var mapping: [String: String] = [:]
        for option in options {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
                throw ValidationError("--ref takes URI=FILE (\(option))")
            }
            let file = String(option[option.index(after: equals)...])
            mapping[String(option[..<equals])] =
                file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        }
        return mapping
    }

    // MARK: - check

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the responses already in the cache against today's contracts.")

        @OptionGroup var options: ConfigOptions
        @Option(help: "Only this rule's contract.") var rule: String?
        @Option(help: "Only URLs matching this glob (as `cache list --url`: * any run, ? one character).")
        var url: String?
        @Flag(help: "The verdicts as JSON.") var json = false

        func run() throws {
            let (configuration, _) = try options.load()
            let rules = configuration.rules.filter { $0.contract?.loaded != nil && (rule == nil || $0.name == rule) }
            guard !rules.isEmpty else {
                throw CommandFailure.failed(rule.map { "no rule \($0) with a contract" } ?? "no rule has a contract")
            }
            guard FileManager.default.fileExists(atPath: configuration.cache.path) else {
                throw CommandFailure.noInput(
                    "no cache at \(configuration.cache.path) (cache.path): \(options.elsewhereHint)")
            }
            let inspector = try CacheInspector(settings: configuration.cache, writable: false)
            var filter = CacheInspector.Filter()
            filter.url = url
            filter.limit = 1_000_000
            let entries = try inspector.list(filter, now: Date().timeIntervalSince1970)
            var progress = Progress()
            var results: [Value] = []
            var broken = 0
            var checked = 0
            // The responses a rule's contract covers, first: the progress counts those, not the cache.
            let owned = entries.compactMap { entry -> (CacheInspector.Entry, TargetURL, Rule)? in
                guard entry.method == "GET" || entry.method == "HEAD" || entry.method == "POST" else { return nil }
                guard let parsed = TargetURL(entry.url),
                    let owner = rules.first(where: {
                        $0.match.matches(method: entry.method, host: parsed.host, path: parsed.path)
                    })
                else { return nil }
                return (entry, parsed, owner)
            }
            for (index, (entry, parsed, owner)) in owned.enumerated() {
                progress.show("checked \(index) of \(owned.count) stored responses")
                checked += 1
                let verdict = try check(
                    entry, rule: owner, url: parsed, inspector: inspector, limit: configuration.limits.maxTransformBody)
                if !verdict.passed { broken += 1 }
                if json {
                    results.append(
                        .object([
                            ("url", .string(entry.url)), ("rule", .string(owner.name)),
                            ("status", .number(Number(entry.status))),
                            ("valid", .bool(verdict.passed)), ("violations_total", .number(Number(verdict.total))),
                            ("violations", .array(verdict.violations.map(ContractCommand.violationJSON))),
                        ]))
                } else if !verdict.passed {
                    progress.done()  // the line is the result's, not glued to the progress
                    print("BROKEN  \(entry.status)  \(entry.url)  (rule \(owner.name))")
                    for violation in verdict.violations.prefix(5) { print("        \(violation)") }
                    if verdict.total > 5 { print("        … \(verdict.total - 5) more") }
                }
            }
            progress.done()
            if json {
                print(Value.array(results).pretty())
            } else {
                print(
                    "\(checked) stored response\(checked == 1 ? "" : "s") checked, \(broken) break\(broken == 1 ? "s" : "") the contract"
                )
            }
            if broken > 0 { throw ExitCode(1) }
        }

        /// The proxy's own checks on the stored response (``Rule/contractVerdict(of:method:url:body:limit:)``).
        private func check(
            _ entry: CacheInspector.Entry, rule: Rule, url: TargetURL, inspector: CacheInspector, limit: Int
        )
            throws -> Verdict
        {
            var verdict = Verdict()
            var body: [UInt8] = []
            _ = try inspector.body(of: entry.id) { body.append(contentsOf: $0) }
            let head = ResponseHead(status: entry.status, headers: entry.headers)
            guard
                let failure = rule.contractVerdict(of: head, method: entry.method, url: url, body: body, limit: limit)?
                    .failure
            else { return verdict }
            for violation in failure.violations { verdict.add(violation) }
            verdict.total = failure.total
            return verdict
        }
    }

    // MARK: - infer

    struct Infer: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a JSON Schema 2020-12 per operation seen in the cache for a host.")

        @OptionGroup var options: ConfigOptions
        @Option(help: "The host whose stored JSON responses are read (host, or host:port for one origin).")
        var host: String
        @Option(help: "A directory for one METHOD-path.schema.json per operation (default: print them).") var out:
            String?

        func run() throws {
            let (configuration, _) = try options.load()
            guard FileManager.default.fileExists(atPath: configuration.cache.path) else {
                throw CommandFailure.noInput(
                    "no cache at \(configuration.cache.path) (cache.path): \(options.elsewhereHint)")
            }
            let inspector = try CacheInspector(settings: configuration.cache, writable: false)
            var filter = CacheInspector.Filter()
            // `host:port` names one origin (as `cache list` prints it); a bare host, every port's.
            var port: Int?
            filter.host = host
            if let colon = host.lastIndex(of: ":"), let number = Int(host[host.index(after: colon)...]),
                !host[..<colon].contains(":") || host.hasPrefix("[")
            {
                port = number
                filter.host = String(host[..<colon])
            }
            filter.limit = 1_000_000
            let entries = try inspector.list(filter, now: Date().timeIntervalSince1970)
            var operations: [(String, SchemaInference)] = []
            var progress = Progress()
            for (index, entry) in entries.enumerated() {
                progress.show("read \(index) of \(entries.count) stored responses")
                guard (200...299).contains(entry.status), let type = entry.contentType,
                    Contract.MediaRange.isJSON(type),
                    let parts = TargetURL(entry.url), port.map({ $0 == parts.port }) ?? true
                else { continue }
                var body: [UInt8] = []
                _ = try inspector.body(of: entry.id) { body.append(contentsOf: $0) }
                if let coding = entry.headers["content-encoding"].flatMap({ ContentCoding(token: $0) }) {
                    guard let decoded = try? coding.decode(body, limit: 64 << 20) else { continue }
                    body = decoded
                }
                guard let value = try? Value.parse(body) else { continue }
                let name = entry.method + " " + Self.template(parts.path)
                if let index = operations.firstIndex(where: { $0.0 == name }) {
                    operations[index].1.add(value)
                } else {
                    var inference = SchemaInference()
                    inference.add(value)
                    operations.append((name, inference))
                }
            }
            progress.done()
            guard !operations.isEmpty else { throw CommandFailure.failed("no stored 2xx JSON responses for \(host)") }
            if let out {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                for (name, inference) in operations {
                    let file = (out as NSString).appendingPathComponent(Self.fileName(name))
                    let text = inference.schema(title: "\(name) (\(host))").pretty() + "\n"
                    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
                    print("\(file)  (\(inference.samples) sample\(inference.samples == 1 ? "" : "s"))")
                }
            } else {
                print(Value.object(operations.map { ($0.0, $0.1.schema(title: "\($0.0) (\(host))")) }).pretty())
            }
        }

        /// `/items/42/reviews` → `/items/{id}/reviews`: numeric and UUID-like segments are parameters.
        static func template(_ path: String) -> String {
            let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
            return bare.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
                let isNumber = !segment.isEmpty && segment.allSatisfy(\.isNumber)
                let isUUID = segment.count == 36 && segment.filter { $0 == "-" }.count == 4
                return isNumber || isUUID ? "{id}" : String(segment)
            }.joined(separator: "/")
        }

        static func fileName(_ name: String) -> String {
            let slug = name.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
            var collapsed = ""
            for character in slug where !(character == "-" && collapsed.hasSuffix("-")) { collapsed.append(character) }
            return collapsed.trimmingCharacters(in: CharacterSet(charactersIn: "-")) + ".schema.json"
        }
    }
}
