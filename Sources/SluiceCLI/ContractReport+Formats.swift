import Contract
import Foundation
import Sluice

/// The report's four forms: JUnit XML for test dashboards, SARIF 2.1.0 for code review (each
/// violation at the file and line of the schema keyword that failed), Markdown for CI step
/// summaries, and JSON for scripts.
extension ContractReport {
    enum Format: String, CaseIterable {
        case junit, sarif, markdown, json

        /// From a file name: `.xml` JUnit, `.sarif` SARIF, `.md` Markdown, `.json` JSON.
        init?(fileName: String) {
            let lower = fileName.lowercased()
            if lower.hasSuffix(".xml") {
                self = .junit
            } else if lower.hasSuffix(".sarif") || lower.hasSuffix(".sarif.json") {
                self = .sarif
            } else if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") {
                self = .markdown
            } else if lower.hasSuffix(".json") {
                self = .json
            } else {
                return nil
            }
        }
    }

    func text(_ format: Format) -> String {
        switch format {
        case .junit: junit()
        case .sarif: sarif()
        case .markdown: markdown()
        case .json: json.json + "\n"
        }
    }

    // MARK: - JUnit

    /// A test suite per rule, a test case per operation × status seen (a `failure` per broken
    /// exchange, its violations listed), and a skipped case per documented operation never seen.
    func junit() -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let tests = rules.reduce(0) { $0 + $1.cases.count + $1.neverSeenCount }
        let failures = rules.reduce(0) { $0 + $1.cases.filter { $0.failed > 0 }.count }
        // (`skipped` is counted per suite: Jenkins' xunit schema allows it on <testsuite> only.)
        out += #"<testsuites name="sluice contracts" tests="\#(tests)" failures="\#(failures)">"#
        out += "\n"
        for rule in rules {
            let failed = rule.cases.filter { $0.failed > 0 }.count
            out +=
                #"  <testsuite name="\#(Self.xml("rule \(rule.name)"))" tests="\#(rule.cases.count + rule.neverSeenCount)""#
            out += #" failures="\#(failed)" skipped="\#(rule.neverSeenCount)" errors="0">"# + "\n"
            out += #"    <properties><property name="contract" value="\#(Self.xml(rule.contract))"/></properties>"#
            out += "\n"
            for item in rule.cases {
                out +=
                    #"    <testcase classname="\#(Self.xml(rule.name))" name="\#(Self.xml("\(item.operation) \(item.status)"))">"#
                out += "\n"
                for failure in item.failures {
                    let first = failure.violations.first.map(\.description) ?? "broken"
                    out +=
                        #"      <failure type="contract-violation" message="\#(Self.xml("\(failure.total) violation\(failure.total == 1 ? "" : "s"): \(first)"))">"#
                    var body = "\(failure.method) \(failure.url) → \(failure.status)\n"
                    for violation in failure.violations {
                        body += "\(violation.place)  \(violation.keyword)  "
                        body += "expected \(violation.expected), found \(violation.found)  [\(violation.schema)]\n"
                    }
                    out += Self.xml(body) + "</failure>\n"
                }
                if item.failed > item.failures.count {
                    out +=
                        #"      <system-out>\#(item.failed - item.failures.count) more broken exchanges not listed</system-out>"#
                    out += "\n"
                }
                out +=
                    #"      <system-out>\#(item.seen) exchange\#(item.seen == 1 ? "" : "s"), \#(item.validated) bod\#(item.validated == 1 ? "y" : "ies") validated</system-out>"#
                out += "\n    </testcase>\n"
            }
            for (operation, statuses) in rule.neverSeen {
                for status in statuses {
                    out +=
                        #"    <testcase classname="\#(Self.xml(rule.name))" name="\#(Self.xml("\(operation) \(status)"))">"#
                    out += #"<skipped message="never seen in this run"/></testcase>"# + "\n"
                }
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    static func xml(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            // XML 1.0 has no way to write other control characters.
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "?"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: - SARIF

    /// SARIF 2.1.0: one result per violation (of the kept broken exchanges), located at the file
    /// and line of the schema keyword that failed; a rule per keyword.
    func sarif(workingDirectory: String = FileManager.default.currentDirectoryPath) -> String {
        var places = SchemaPlaces()
        var results: [Value] = []
        var keywords: [String] = []
        for rule in rules {
            for item in rule.cases {
                for failure in item.failures {
                    for violation in failure.violations {
                        let ruleId = "contract/" + violation.keyword
                        if !keywords.contains(ruleId) { keywords.append(ruleId) }
                        let (path, line) = places.place(of: violation, contractPath: rule.contract)
                        var region: [(String, Value)] = []
                        if let line { region.append(("startLine", .number(Number(line)))) }
                        var artifact: [(String, Value)] = [("uri", .string(Self.uri(path, from: workingDirectory)))]
                        if !path.hasPrefix("/") || path.hasPrefix(workingDirectory + "/") {
                            artifact.append(("uriBaseId", .string("%SRCROOT%")))
                        }
                        var physical: [(String, Value)] = [("artifactLocation", .object(artifact))]
                        if !region.isEmpty { physical.append(("region", .object(region))) }
                        let text =
                            "\(failure.direction == .response ? "The response to" : "The request for") "
                            + "\(failure.method) \(failure.url) (\(item.operation), \(item.status)) breaks rule "
                            + "\(rule.name)'s contract at \(violation.description)"
                        results.append(
                            .object([
                                ("ruleId", .string(ruleId)), ("level", .string("error")),
                                ("message", .object([("text", .string(text))])),
                                ("locations", .array([.object([("physicalLocation", .object(physical))])])),
                                (
                                    "properties",
                                    .object([
                                        ("rule", .string(rule.name)), ("url", .string(failure.url)),
                                        ("status", .number(Number(failure.status))),
                                        ("pointer", .string(violation.pointer)), ("schema", .string(violation.schema)),
                                        ("expected", .string(violation.expected)), ("found", .string(violation.found)),
                                    ])
                                ),
                            ]))
                    }
                }
            }
        }
        let driver: Value = .object([
            ("name", .string("Sluice")), ("version", .string(SluiceVersion.current)),
            (
                "rules",
                .array(
                    keywords.map { id in
                        .object([
                            ("id", .string(id)),
                            (
                                "shortDescription",
                                .object([
                                    ("text", .string("A response or request breaks the \(id.dropFirst(9)) keyword"))
                                ])
                            ),
                        ])
                    })
            ),
        ])
        let document: Value = .object([
            ("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json")), ("version", .string("2.1.0")),
            (
                "runs",
                .array([
                    .object([
                        ("tool", .object([("driver", driver)])),
                        (
                            "originalUriBaseIds",
                            .object([("%SRCROOT%", .object([("uri", .string("file://" + workingDirectory + "/"))]))])
                        ),
                        ("results", .array(results)),
                    ])
                ])
            ),
        ])
        return document.pretty() + "\n"
    }

    /// A path relative to `directory` when it is inside it (what code review tools match against
    /// the repository), else a `file://` URI.
    /// (A URI reference: a space or a non-ASCII letter of the path is percent-encoded.)
    static func uri(_ path: String, from directory: String) -> String {
        func encoded(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? text
        }
        guard path.hasPrefix("/") else { return encoded(path) }
        if path.hasPrefix(directory + "/") { return encoded(String(path.dropFirst(directory.count + 1))) }
        return "file://" + encoded(path)
    }

    // MARK: - Markdown

    /// A summary table for CI step summaries (`$GITHUB_STEP_SUMMARY`), the broken exchanges, and
    /// what was never seen.
    func markdown() -> String {
        var out = "## Sluice contract report\n\n"
        if rules.isEmpty { return out + "No rule has a contract.\n" }
        let verdict =
            failedExchanges == 0
            ? "✅ no violations" : "❌ \(failedExchanges) broken exchange\(failedExchanges == 1 ? "" : "s")"
        out += "\(verdict) in \(checkedExchanges) checked.\n\n"
        out += "| rule | operation | status (or request) | exchanges | bodies validated | broken |\n"
        out += "|---|---|---|---:|---:|---:|\n"
        for rule in rules {
            for item in rule.cases {
                out += "| \(Self.cell(rule.name)) | \(Self.cell(item.operation)) | \(item.status) | \(item.seen) | "
                out += "\(item.validated) | \(item.failed == 0 ? "0" : "**\(item.failed)**") |\n"
            }
        }
        for rule in rules where rule.failed > 0 {
            out += "\n### Rule \(Self.cell(rule.name)): broken exchanges\n\n"
            for item in rule.cases {
                // The first ten, then those that break the contract somewhere the listed ones do
                // not (up to ten more); what is left out is said.
                var listed: [ContractReport.Failure] = []
                var places: Set<String> = []
                for failure in item.failures {
                    let own = failure.violations.map { $0.keyword + "\u{1F}" + $0.schema }
                    guard listed.count < 10 || (listed.count < 20 && own.contains { !places.contains($0) }) else {
                        continue
                    }
                    listed.append(failure)
                    places.formUnion(own)
                }
                for failure in listed {
                    let whose = failure.direction == .response ? "the origin's \(item.status)" : "the request"
                    out += "- \(Self.code("\(failure.method) \(failure.url)")) → \(failure.status) to the client "
                    out += "(\(Self.cell(item.operation)), \(whose)):\n"
                    for violation in failure.violations.prefix(5) {
                        out += "  - \(Self.code(violation.place)) \(Self.cell(violation.keyword)): "
                        out += "expected \(Self.cell(violation.expected)), found \(Self.cell(violation.found))\n"
                    }
                    if failure.total > 5 { out += "  - … \(failure.total - 5) more\n" }
                }
                if item.failed > listed.count {
                    out +=
                        "- … \(item.failed - listed.count) more broken exchange\(item.failed - listed.count == 1 ? "" : "s") "
                    out += "of \(Self.cell(item.operation)) not listed\n"
                }
            }
        }
        for rule in rules where !rule.neverSeen.isEmpty {
            let responses = "documented response\(rule.neverSeenCount == 1 ? "" : "s")"
            out += "\n<details><summary>Rule \(Self.cell(rule.name)): \(rule.neverSeenCount) \(responses) never seen "
            out += "(in \(rule.neverSeen.count) of \(rule.operationsTotal) operations)</summary>\n\n"
            for (operation, statuses) in rule.neverSeen {
                out += "- \(Self.cell(operation)): \(statuses.joined(separator: ", "))\n"
            }
            out += "\n</details>\n"
        }
        return out
    }

    /// Text from traffic or a document as Markdown reads it in a table cell or a list: `|` escaped,
    /// line breaks as spaces, HTML's special characters as entities (GitHub renders raw HTML in a job
    /// summary: an origin's `</details>` or `<img onerror=…>` must stay text).
    static func cell(_ text: String) -> String {
        HTMLText.escaped(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\r\n", with: " ")
            .replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
    }

    /// Text as a Markdown code span that nothing in it can end: line breaks as spaces, a fence
    /// longer than any run of backticks inside, padded when it begins or ends with one (for
    /// list items: in a table, `|` would still need escaping).
    static func code(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: "\r", with: " ")
        var longest = 0
        var run = 0
        for character in flat {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let pad = flat.hasPrefix("`") || flat.hasSuffix("`") ? " " : ""
        return fence + pad + flat + pad + fence
    }
}
