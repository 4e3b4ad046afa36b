/// What a loaded contract can check and what it cannot: the counts said once per contract at
/// start (and in `/stats`), and the findings `sluice contract lint` and `check-config` list.
public struct ContractSummary: Sendable, Equatable {
    /// Operations loaded (method + path template).
    public var operations = 0
    /// Operations with at least one documented response whose JSON body has a schema (what
    /// Sluice validates bodies against).
    public var withResponseSchemas = 0
    /// Parts of the document read leniently or ignored.
    public var warnings = 0

    public init(operations: Int = 0, withResponseSchemas: Int = 0, warnings: Int = 0) {
        self.operations = operations
        self.withResponseSchemas = withResponseSchemas
        self.warnings = warnings
    }

    /// `12 operations, 11 with response schemas, 0 warnings`.
    public var description: String {
        "\(operations) operation\(operations == 1 ? "" : "s"), \(withResponseSchemas) with response schemas, "
            + "\(warnings) warning\(warnings == 1 ? "" : "s")"
    }
}

/// One thing `sluice contract lint` says about a document.
public struct LintFinding: Sendable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        /// The document could not be loaded: nothing of it is checked.
        case error
        /// A part read leniently or ignored.
        case warning
        /// A part that is read but cannot be checked (no schema, a body that is not JSON).
        case unchecked
        /// An example the document gives that breaks its own schema (`contract lint --examples`).
        case example
    }

    public var severity: Severity
    public var place: SourcePlace?
    public var message: String

    public init(severity: Severity, place: SourcePlace?, message: String) {
        self.severity = severity
        self.place = place
        self.message = message
    }

    public init(severity: Severity, _ error: ContractError) {
        self.severity = severity
        self.place = SourcePlace(file: error.file, line: error.line, pointer: error.pointer ?? "")
        self.message = error.message
    }

    public var description: String {
        severity.rawValue + ": " + (place.map { "\($0): " } ?? "") + message
    }
}

extension OpenAPIContract {
    /// The counts for the start-up line and `/stats`.
    public var summary: ContractSummary {
        ContractSummary(
            operations: operations.count,
            withResponseSchemas: operations.filter { operation in
                operation.responses.contains {
                    $0.response.body?.content.contains {
                        ($0.framing != nil || MediaRange.coversJSON($0.range)) && ($0.schema ?? $0.itemSchema) != nil
                    } == true
                }
            }.count,
            warnings: warnings.count)
    }

    /// Every warning, then what cannot be checked and why, in document order of the operations.
    public var findings: [LintFinding] {
        // In the order of the files' lines (each file where it first comes), as an editor shows them.
        var fileOrder: [String: Int] = [:]
        for warning in warnings where fileOrder[warning.file] == nil { fileOrder[warning.file] = fileOrder.count }
        let ordered = warnings.enumerated().sorted { one, other in
            let (a, b) = (one.element, other.element)
            if a.file != b.file { return fileOrder[a.file]! < fileOrder[b.file]! }
            if (a.line ?? 0) != (b.line ?? 0) { return (a.line ?? 0) < (b.line ?? 0) }
            return one.offset < other.offset
        }
        var out = ordered.map { LintFinding(severity: .warning, $0.element) }
        for operation in operations where !operation.responses.isEmpty {
            var schemaless: [String] = []
            for (key, response) in operation.responses {
                for media in response.body?.content ?? [] where !media.isFile {
                    let (range, schema) = (media.range, media.schema ?? media.itemSchema)
                    if media.framing != nil {
                        if schema == nil { schemaless.append("\(key) \(range)") }
                    } else if !MediaRange.coversJSON(range) {
                        if schema != nil {
                            out.append(
                                LintFinding(
                                    severity: .unchecked, place: response.place,
                                    message:
                                        "\(operation.name) \(key) \(range): only JSON bodies are validated; its schema is not applied"
                                ))
                        }
                    } else if schema == nil {
                        schemaless.append("\(key) \(range)")
                    }
                }
            }
            if !schemaless.isEmpty {
                out.append(
                    LintFinding(
                        severity: .unchecked, place: operation.place,
                        message:
                            "\(operation.name): JSON responses without a schema (\(schemaless.joined(separator: ", "))): their bodies are not checked"
                    ))
            }
        }
        return out
    }

    /// The document's examples of JSON bodies that break their own schemas: each request body's
    /// against the request schema, each response's against its response schema (readOnly and
    /// writeOnly read as each direction reads them). An example breaks a client written from
    /// the document, or a mock server that serves it (Prism), before any traffic does.
    public var exampleFindings: [LintFinding] {
        var out: [LintFinding] = []
        func check(_ body: Body?, _ label: String, _ direction: Direction) {
            for media in body?.content ?? [] where MediaRange.coversJSON(media.range) {
                guard let schema = media.schema else { continue }
                for example in media.examples {
                    let verdict = schema.validate(Array(example.value.json.utf8), direction: direction)
                    guard !verdict.passed, let first = verdict.violations.first else { continue }
                    let more = verdict.total > 1 ? " (and \(verdict.total - 1) more)" : ""
                    out.append(
                        LintFinding(
                            severity: .example, place: example.place,
                            message:
                                "\(label) \(media.range) example \"\(example.name)\" breaks its schema: \(first)\(more)"
                        ))
                }
            }
        }
        for operation in operations {
            check(operation.requestBody, "\(operation.name) request", .request)
            for (key, response) in operation.responses { check(response.body, "\(operation.name) \(key)", .response) }
        }
        return out
    }
}
