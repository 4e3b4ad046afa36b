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

    // MARK: - validate

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate one body (or one per line with --jsonl); exit 1 on a violation.",
            discussion: """
                sluice contract validate --schema feed.schema.json body.json
                sluice contract validate --openapi shop.yaml --operation getItem --status 200 - < item.json
                sluice contract validate --openapi shop.yaml --operation 'GET /items/{itemId}' --status 200 item.json
                sluice contract validate --schema event.json --jsonl events.jsonl
                sluice contract validate --schema order.json --ref https://example.com/money.json=money.json body.json
                """)

        @Option(help: "An OpenAPI 3.0/3.1 document.") var openapi: String?
        @Option(
            help:
                "The operation whose body is validated (with --openapi): its operationId, or \"METHOD /path\" as the document writes it."
        )
        var operation: String?
        @Option(help: "The response status whose body is validated (with --openapi); without it, the request body.")
        var status: Int?
        @Option(help: "A JSON Schema file.") var schema: String?
        @Option(help: "annotate (default) or assert: whether format is checked.") var formats = "annotate"
        @Option(name: .customLong("ref"), help: "Map a remote $ref to a local file: URI=FILE (repeatable).")
        var refs: [String] = []
        @Flag(help: "One JSON body per line.") var jsonl = false
        @Flag(help: "The verdicts as JSON.") var json = false
        @Argument(help: "The body file, or - (default) for standard input.") var file = "-"

        func run() throws {
            guard let mode = FormatMode(rawValue: formats) else {
                throw ValidationError("--formats is annotate or assert")
            }
            let validator = try loadValidator(formats: mode)
            // An operation's request body (no --status): readOnly properties are not required in
            // it, writeOnly ones are (OpenAPI's Schema Object).
            let direction: Direction = openapi != nil && status == nil ? .request : .response
            let data: Data
            if file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let read = FileManager.default.contents(atPath: file) else {
                    throw CommandFailure.noInput("cannot read \(file)")
                }
                data = read
            }
            let bytes = [UInt8](data)
            var failed = 0
            var results: [Value] = []
            if jsonl {
                var progress = Progress()
                var line = 0
                for piece in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                    line += 1
                    if piece.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                    let verdict = validator.validate(piece, direction: direction)
                    progress.show("line \(line)")
                    if !verdict.passed { failed += 1 }
                    report(verdict, label: "line \(line)", into: &results)
                }
                progress.done()
            } else {
                let verdict = validator.validate(bytes, direction: direction)
                if !verdict.passed { failed += 1 }
                report(verdict, label: file == "-" ? "stdin" : file, into: &results)
            }
            if json { print(Value.array(results).pretty()) }
            if failed > 0 { throw ExitCode(1) }
        }

        private func report(_ verdict: Verdict, label: String, into results: inout [Value]) {
            if json {
                results.append(
                    .object([
                        ("input", .string(label)), ("valid", .bool(verdict.passed)),
                        ("violations_total", .number(Number(verdict.total))),
                        ("violations", .array(verdict.violations.map(ContractCommand.violationJSON))),
                    ]))
                return
            }
            if verdict.passed {
                print("\(label): valid")
            } else {
                print("\(label): \(verdict.total) violation\(verdict.total == 1 ? "" : "s")")
                for violation in verdict.violations { print("  \(violation)  [\(violation.schema)]") }
            }
            for note in verdict.notes { print("  note: \(note)") }
        }

        private func loadValidator(formats: FormatMode) throws -> SchemaValidator {
            do {
                if let schema {
                    guard openapi == nil else { throw ValidationError("give --schema or --openapi, not both") }
                    return try SchemaValidator.load(
                        file: schema, refs: try ContractCommand.refMapping(refs), formats: formats)
                }
                guard let openapi, let operationID = operation else {
                    throw ValidationError("give --schema FILE, or --openapi FILE --operation ID [--status CODE]")
                }
                let document = try OpenAPIContract.load(
                    file: openapi, refs: try ContractCommand.refMapping(refs), formats: formats)
                let named = operationID.split(whereSeparator: \.isWhitespace).map(String.init)
                let byPath = named.count == 2 ? document.operation(method: named[0], template: named[1]) : nil
                guard let found = document.operation(id: operationID) ?? byPath else {
                    throw CommandFailure.failed("no operation \(operationID) in \(openapi)")
                }
                let validator =
                    status.map { document.responseSchema(of: found, status: $0) }
                    ?? document.requestSchema(of: found)
                guard let validator else {
                    throw CommandFailure.failed(
                        "\(operationID) has no JSON \(status.map { "response schema for \($0)" } ?? "request body schema")"
                    )
                }
                return validator
            } catch let error as ContractError {
                throw CommandFailure.noInput(error.description)
            }
        }
    }

    // MARK: - lint

    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say what of a contract cannot be checked, and why; exit 1 when it does not load.",
            discussion: """
                Each finding is `severity: file:line #pointer: message`: `warning` for parts read
                leniently or ignored, `unchecked` for parts read but not checkable (a JSON response
                without a schema, a schema on a body that is not JSON), `error` when the document
                cannot be loaded (then nothing of it is checked).
                  sluice contract lint openapi.yaml
                  sluice contract lint --json openapi.yaml | jq '.findings[] | select(.severity == "warning")'
                """)

        @Option(name: .customLong("ref"), help: "Map a remote $ref to a local file: URI=FILE (repeatable).")
        var refs: [String] = []
        @Flag(help: "The findings as JSON.") var json = false
        @Argument(help: "An OpenAPI 3.0/3.1 document (YAML or JSON).") var file: String

        func run() throws {
            let mapping = try ContractCommand.refMapping(refs)
            var findings: [LintFinding] = []
            var summary: ContractSummary?
            do throws(ContractError) {
                let document = try OpenAPIContract.load(file: file, refs: mapping)
                summary = document.summary
                findings = document.findings
            } catch {
                findings = [LintFinding(severity: .error, error)]
            }
            if json {
                var members: [(String, Value)] = [("file", .string(file)), ("loaded", .bool(summary != nil))]
                if let summary {
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
                if let summary {
                    let unchecked = findings.filter { $0.severity == .unchecked }.count
                    print("\(file): \(summary.description), \(unchecked) unchecked")
                }
            }
            if summary == nil { throw ExitCode(1) }
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
            for (index, entry) in entries.enumerated() {
                progress.show("checked \(index) of \(entries.count) stored responses")
                guard entry.method == "GET" || entry.method == "HEAD" || entry.method == "POST" else { continue }
                guard let parsed = TargetURL(entry.url),
                    let owner = rules.first(where: {
                        $0.match.matches(method: entry.method, host: parsed.host, path: parsed.path)
                    })
                else { continue }
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
        @Option(help: "The host whose stored JSON responses are read.") var host: String
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
            filter.host = host
            filter.limit = 1_000_000
            let entries = try inspector.list(filter, now: Date().timeIntervalSince1970)
            var operations: [(String, SchemaInference)] = []
            var progress = Progress()
            for (index, entry) in entries.enumerated() {
                progress.show("read \(index) of \(entries.count) stored responses")
                guard (200...299).contains(entry.status), let type = entry.contentType,
                    Contract.MediaRange.isJSON(type),
                    let parts = TargetURL(entry.url)
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
