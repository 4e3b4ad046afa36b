import Contract

/// A rule's `contract:` block: which document is the promise, and what to do when it is broken.
public struct ContractRule: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// An OpenAPI 3.0/3.1 document (YAML or JSON).
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

    /// Warnings of the loaded contracts, one line each.
    public var contractWarnings: [String] {
        rules.flatMap { rule in
            (rule.contract?.loaded?.warnings ?? []).map { "rule \(rule.name): contract: \($0)" }
        }
    }
}
