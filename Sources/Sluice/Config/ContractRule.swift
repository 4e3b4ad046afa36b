import Contract

/// A rule's `contract:` block: which document is the promise, and what to do when it is broken.
public struct ContractRule: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// An OpenAPI 3.0, 3.1 or 3.2 (or Swagger 2.0) document (YAML or JSON).
        case openAPI(String)
        /// A JSON Schema for the 2xx JSON bodies of the rule's responses.
        case schema(String)

        public var path: String {
            switch self {
            case .openAPI(let path), .schema(let path): path
            }
        }
    }

    public enum Mode: String, Sendable {
        case enforce, report
    }

    public enum RequestMode: String, Sendable {
        case off, report, enforce
    }

    public enum Undocumented: String, Sendable {
        case pass, report, enforce
    }

    public var source: Source
    public var onViolation = Mode.report
    public var requests = RequestMode.off
    public var undocumented = Undocumented.report
    public var basePath: String?
    /// `http(s)://` URIs of `$ref`s → local files.
    public var refs: [String: String] = [:]
    public var formats = FormatMode.annotate
    /// The compiled document (set when the configuration is loaded).
    public var loaded: LoadedContract?

    public init(source: Source) { self.source = source }

    public static func == (lhs: ContractRule, rhs: ContractRule) -> Bool {
        lhs.source == rhs.source && lhs.onViolation == rhs.onViolation && lhs.requests == rhs.requests
            && lhs.undocumented == rhs.undocumented && lhs.basePath == rhs.basePath && lhs.refs == rhs.refs
            && lhs.formats == rhs.formats && lhs.loaded === rhs.loaded
    }

    /// Compiles the document; a ``ConfigError`` names the file, line and pointer.
    func load(key: String) throws(ConfigError) -> LoadedContract {
        do throws(ContractError) {
            switch source {
            case .openAPI(let path):
                let document = try OpenAPIContract.load(file: path, refs: refs, formats: formats, basePath: basePath)
                return LoadedContract(kind: .openAPI(document), warnings: document.warnings)
            case .schema(let path):
                return LoadedContract(
                    kind: .schema(try SchemaValidator.load(file: path, refs: refs, formats: formats)), warnings: [])
            }
        } catch {
            throw ConfigError(key: key, line: nil, message: "contract: \(error)")
        }
    }
}

/// A compiled contract, shared read-only by every exchange of its rule.
public final class LoadedContract: @unchecked Sendable {
    public enum Kind {
        case openAPI(OpenAPIContract)
        case schema(SchemaValidator)
    }

    public let kind: Kind
    /// Parts of the document read leniently or ignored (said once, at load).
    public let warnings: [ContractError]

    /// Operations, those with response schemas, warnings (`/stats`, the start-up line).
    public var summary: ContractSummary {
        switch kind {
        case .openAPI(let document): document.summary
        case .schema: ContractSummary(operations: 0, withResponseSchemas: 0, warnings: warnings.count)
        }
    }

    init(kind: Kind, warnings: [ContractError]) {
        self.kind = kind
        self.warnings = warnings
    }
}

extension Configuration {
    /// Compiles every rule's contract (at start, at `check-config`, at SIGHUP): a document that
    /// does not load is an error with its file, line and pointer.
    public func loadingContracts() throws(ConfigError) -> Configuration {
        var copy = self
        for index in copy.rules.indices {
            guard var contract = copy.rules[index].contract, contract.loaded == nil else { continue }
            contract.loaded = try contract.load(key: "rules[\(index)].contract")
            copy.rules[index].contract = contract
        }
        return copy
    }

    /// One line per loaded contract, said at start and at a reload: what it checks, how many
    /// warnings it has and where to read them (never the warnings themselves: a large document
    /// can have hundreds). `hasWarnings` picks the log level.
    public var contractLines: [(line: String, hasWarnings: Bool)] {
        rules.compactMap { rule in
            guard let contract = rule.contract, let loaded = contract.loaded else { return nil }
            return (loaded.line(rule: rule.name, path: contract.source.path), loaded.summary.warnings > 0)
        }
    }
}

extension LoadedContract {
    /// `rule api: contract shop.yaml (OpenAPI 3.0.3): 12 operations, 11 with response schemas, 0 warnings`.
    public func line(rule: String, path: String) -> String {
        switch kind {
        case .openAPI(let document):
            let counts = document.summary
            var line = "rule \(rule): contract \(path) (OpenAPI \(document.version)): \(counts.description)"
            if counts.warnings > 0 { line += "; see `sluice contract lint \(path)`" }
            if counts.withResponseSchemas == 0 { line += "; no response body is checked" }
            return line
        case .schema:
            return "rule \(rule): contract \(path) (JSON Schema): 2xx JSON bodies checked"
        }
    }
}
