import Foundation

/// A compiled JSON Schema, ready to validate bodies: one per contract load, shared by every
/// validation (read-only).
public final class SchemaValidator: @unchecked Sendable {
    let root: Schema
    private(set) var dynamicTargets: [String: Schema]
    /// The graph the root belongs to (shared by every schema of one contract).
    private(set) var graph: SchemaGraph
    /// The flat program when every schema the root reaches uses plain keywords only.
    private(set) var fast: FastProgram?

    /// Whether validations run on the fast lane (``FastEngine``) rather than ``Engine``.
    public var usesFastLane: Bool { fast != nil }

    /// Joins the contract's graph once every schema of it is compiled.
    func seal(graph: SchemaGraph, targets: [String: Schema]) {
        self.graph = graph
        dynamicTargets = targets
        fast = FastProgram.build(root)
    }
    /// Where the schema is (`file:///…#/…` or `#/components/…`).
    public var location: String { root.location }

    /// The root's `maxItems`, through `$ref`s (a sequence checked as an array knows at once).
    public var rootMaxItems: Int? {
        var node = root
        var steps = 0
        while node.maxItems == nil, let target = node.ref, steps < 32 {
            node = target
            steps += 1
        }
        return node.maxItems
    }

    init(root: Schema, dynamicTargets: [String: Schema], graph: SchemaGraph) {
        self.root = root
        self.dynamicTargets = dynamicTargets
        self.graph = graph
        if !graph.nodes.isEmpty { fast = FastProgram.build(root) }
    }

    /// Compiles the schema at `reference` (absolute, or relative to `base`) in `registry`.
    public static func compile(
        _ reference: String, base: String, registry: SchemaRegistry, formats: FormatMode = .annotate
    ) throws(ContractError) -> SchemaValidator {
        let compiler = SchemaCompiler(registry: registry, formats: formats, home: URIReference(base).withoutFragment)
        let root = try compiler.compile(reference: reference, base: base)
        let targets = try compiler.dynamicTargets()
        if let error = ContractError.first(of: compiler.errors) { throw error }
        compiler.finish()
        return SchemaValidator(root: root, dynamicTargets: targets, graph: SchemaGraph(nodes: compiler.all))
    }

    /// Compiles a schema file (JSON or YAML; `$ref`s to files beside it load as needed, `refs`
    /// maps `http(s)://` URIs to local files).
    public static func load(
        file path: String, refs: [String: String] = [:], formats: FormatMode = .annotate
    ) throws(ContractError) -> SchemaValidator {
        let uri = FileSource.uri(forPath: path)
        let registry = SchemaRegistry(loader: FileSource.loader(refs: refs))
        registry.add(try FileSource.read(uri: uri))
        return try compile(uri, base: uri, registry: registry, formats: formats)
    }

    /// A validation of one body, fed as it arrives.
    public func validation(direction: Direction = .response, keep: Int = 20, maxDepth: Int = 512) -> BodyValidation {
        validation(direction: direction, keep: keep, maxDepth: maxDepth, general: false)
    }

    func validation(direction: Direction, keep: Int, maxDepth: Int, general: Bool) -> BodyValidation {
        var options = Engine.Options()
        options.direction = direction
        options.keep = keep
        options.maxDepth = maxDepth
        if let fast, !general { return BodyValidation(fast: FastEngine(program: fast, options: options)) }
        return BodyValidation(engine: Engine(root: root, options: options, dynamicTargets: dynamicTargets))
    }

    /// Validates with the general engine even when the fast lane applies (the two must agree;
    /// the test suite checks that they do).
    public func validateWithGeneralEngine(_ body: [UInt8], direction: Direction = .response) -> Verdict {
        var validation = validation(direction: direction, keep: 20, maxDepth: 512, general: true)
        validation.feed(body)
        return validation.finish()
    }

    /// Validates a whole body.
    public func validate(_ body: some Collection<UInt8>, direction: Direction = .response) -> Verdict {
        var validation = validation(direction: direction)
        let bytes = Array(body)
        bytes.withUnsafeBytes { validation.feed($0) }
        return validation.finish()
    }
}

/// Every compiled node of one contract: they reference each other (cycles included), so the
/// graph is owned here and unlinked when the last validator using it goes.
final class SchemaGraph: @unchecked Sendable {
    let nodes: [Schema]
    init(nodes: [Schema]) { self.nodes = nodes }
    deinit { for node in nodes { node.unlink() } }
}

/// One body's validation in progress: the tokenizer's state and the open groups, nothing else.
public struct BodyValidation {
    /// Which engine runs: the flat program's, or the general one.
    private enum Runner {
        case fast(FastEngine)
        case general(Engine)
        /// Only while an engine is out being fed: taking it out of the enum keeps its buffers
        /// uniquely referenced, so feeding never copies them.
        case moving
    }

    private var runner: Runner
    private var tokenizer = Tokenizer()

    init(engine: Engine) { runner = .general(engine) }
    init(fast: FastEngine) { runner = .fast(fast) }

    /// Whether more bytes can change the verdict (false after malformed JSON or `max-depth`).
    public var isOpen: Bool {
        let stopped: Bool =
            switch runner {
            case .fast(let engine): engine.stopped
            case .general(let engine): engine.stopped
            case .moving: true
            }
        return !stopped && !tokenizer.failed
    }

    /// The violations so far.
    public var verdictSoFar: Verdict {
        switch runner {
        case .fast(let engine): engine.verdict
        case .general(let engine): engine.verdict
        case .moving: Verdict()
        }
    }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard isOpen else { return }
        switch runner {
        case .fast(var engine):
            runner = .moving
            tokenizer.feed(bytes, into: &engine)
            runner = .fast(engine)
        case .general(var engine):
            runner = .moving
            tokenizer.feed(bytes, into: &engine)
            runner = .general(engine)
        case .moving: break
        }
    }

    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The end of the body: the verdict.
    public mutating func finish() -> Verdict {
        guard isOpen else { return verdictSoFar }
        switch runner {
        case .fast(var engine):
            runner = .moving
            tokenizer.finish(into: &engine)
            runner = .fast(engine)
        case .general(var engine):
            runner = .moving
            tokenizer.finish(into: &engine)
            runner = .general(engine)
        case .moving: break
        }
        return verdictSoFar
    }
}

/// Contract files on disk.
public enum FileSource {
    public static func uri(forPath path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return "file://" + URIReference.removeDotSegments(absolute)
    }

    /// The document at a `file://` URI.
    public static func read(uri: String) throws(ContractError) -> SourceDocument {
        let path = String(URIReference(uri).path)
        let decoded = SchemaRegistry.percentDecode(path)
        guard let data = FileManager.default.contents(atPath: decoded) else {
            throw ContractError(file: uri, line: nil, pointer: nil, message: "cannot read the file")
        }
        // JSON and YAML are Unicode (RFC 8259 §8.1): bytes that are not UTF-8 are refused, with
        // their line, not read as U+FFFD (an enum of "caf\u{FFFD}" matches nothing).
        guard let text = String(validating: data, as: UTF8.self) else {
            // The first byte that is not: where the valid scalars before it end.
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = data.makeIterator()
            var valid = 0
            while case .valid(let scalar) = parser.parseScalar(from: &iterator) { valid += scalar.count }
            let line = 1 + data.prefix(valid).count { $0 == 0x0A }
            throw ContractError(
                file: uri, line: line, pointer: nil,
                message: "not UTF-8 (byte \(valid)): JSON and YAML documents are Unicode")
        }
        return try SourceDocument.read(text: text, uri: uri)
    }

    /// A registry loader: `file://` URIs from disk, `http(s)://` ones only through `refs`.
    public static func loader(refs: [String: String]) -> SchemaRegistry.Loader {
        { (uri: String) throws(ContractError) -> SourceDocument? in
            if uri.hasPrefix("file://") { return try read(uri: uri) }
            if let local = refs[uri] ?? refs[uri + "#"] {
                let document = try read(uri: Self.uri(forPath: local))
                return SourceDocument(uri: uri, root: document.root, lines: document.lines)
            }
            if uri.hasPrefix("http://") || uri.hasPrefix("https://") {
                throw ContractError(
                    file: uri, line: nil, pointer: nil,
                    message:
                        "a $ref to a network URI: Sluice never fetches while validating; map it to a local file with contract.refs (sluice contract: --ref URI=FILE)"
                )
            }
            return nil
        }
    }
}

extension SchemaCompiler {
    /// Every `$dynamicAnchor` in the registry, compiled, keyed `resource#name`.
    func dynamicTargets() throws(ContractError) -> [String: Schema] {
        var targets: [String: Schema] = [:]
        guard usesDynamicReferences else { return targets }
        for (key, location) in registry.dynamicAnchors {
            targets[key] = try compile(location)
        }
        return targets
    }
}
