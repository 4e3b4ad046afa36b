import Foundation

/// Reads an OpenAPI document (and the files its `$ref`s name) into an ``OpenAPIContract``.
struct OpenAPILoader {
    let registry: SchemaRegistry
    let compiler: SchemaCompiler
    let uri: String
    let dialect: Dialect
    /// OAS 3.2: `query` operations, `additionalOperations`, `itemSchema` and sequential media types.
    var reads32 = false
    /// Swagger 2.0: `basePath`, `definitions`, body parameters, `produces`/`consumes`.
    var swagger2 = false
    /// The document's root (2.0's `produces` and `consumes` are there).
    var documentRoot = Value.null
    var readsSequences: Bool { reads32 }
    var warnings: [ContractError] = []
    /// Broken path items and operations, each said (the document loads only without any).
    var errors: [ContractError] = []
    /// Schemas compiled so far, by location (every `schema` is compiled once).
    private var validators: [String: SchemaValidator] = [:]

    init(registry: SchemaRegistry, compiler: SchemaCompiler, uri: String, dialect: Dialect) {
        self.registry = registry
        self.compiler = compiler
        self.uri = uri
        self.dialect = dialect
    }

    static func load(
        file path: String, refs: [String: String], formats: FormatMode, basePath: String?
    ) throws(ContractError) -> OpenAPIContract {
        let uri = FileSource.uri(forPath: path)
        let document = try FileSource.read(uri: uri)
        let (named, loader) = Self.selfNamed(document, loader: FileSource.loader(refs: refs))
        return try load(document: named, loader: loader, formats: formats, basePath: basePath)
    }

    /// A document that names itself with `$self` (OAS 3.2 §4.1.2.2) is known by that URI: its
    /// references resolve against it. Documents whose URIs fall under the same folder as `$self`
    /// are read from the files under the document's own folder (`shared/foo` as `shared/foo`,
    /// `shared/foo.yaml`, `.yml` or `.json`), so that a description that names itself where it
    /// is published loads from its checkout; `refs` still maps any URI to a file.
    static func selfNamed(_ document: SourceDocument, loader: @escaping SchemaRegistry.Loader) -> (
        SourceDocument, SchemaRegistry.Loader
    ) {
        guard let text = document.root["$self"]?.string, !text.isEmpty else { return (document, loader) }
        let own = URIReference(URIReference.resolve(text, against: document.uri)).withoutFragment
        guard own != document.uri else { return (document, loader) }
        let named = SourceDocument(uri: own, root: document.root, lines: document.lines)
        func folder(_ uri: String) -> String { uri.lastIndex(of: "/").map { String(uri[...$0]) } ?? uri }
        let ownFolder = folder(own)
        let fileFolder = folder(document.uri)
        let mapped: SchemaRegistry.Loader = { (target: String) throws(ContractError) -> SourceDocument? in
            if target == own { return named }
            if target.hasPrefix(ownFolder),
                case let rest = target.dropFirst(ownFolder.count),
                !SchemaRegistry.percentDecode(String(rest)).split(separator: "/").contains("..")
            {
                for suffix in ["", ".yaml", ".yml", ".json"] {
                    let file = fileFolder + rest + suffix
                    let path = SchemaRegistry.percentDecode(String(URIReference(file).path))
                    guard FileManager.default.fileExists(atPath: path) else { continue }
                    let found = try FileSource.read(uri: file)
                    return SourceDocument(uri: target, root: found.root, lines: found.lines)
                }
            }
            return try loader(target)
        }
        return (named, mapped)
    }

    static func load(
        document: SourceDocument, loader: SchemaRegistry.Loader?, formats: FormatMode, basePath: String?
    ) throws(ContractError) -> OpenAPIContract {
        var document = document
        let (version, dialect, notes) = try OpenAPIVersion.read(document)
        let registry = SchemaRegistry(defaultDialect: dialect, loader: loader)
        for note in notes { registry.warn(note) }
        if version == "2.0", let (rewritten, warnings) = Swagger2Polymorphism.rewrite(document.root) {
            for (pointer, message) in warnings {
                registry.warn(
                    ContractError(
                        file: document.uri, line: document.line(of: pointer), pointer: pointer, message: message))
            }
            document = SourceDocument(uri: document.uri, root: rewritten, lines: document.lines)
        }
        let root = document.root
        if let text = root["$self"]?.string, text.contains("#") {
            registry.warn(
                ContractError(
                    file: document.uri, line: document.line(of: "/$self"), pointer: "/$self",
                    message: "$self has a fragment, which OAS 3.2 forbids: read without it"))
        }
        registry.addContainer(document)
        let compiler = SchemaCompiler(registry: registry, formats: formats, home: document.uri)
        compiler.readsSwagger2 = version == "2.0"
        var loader = OpenAPILoader(registry: registry, compiler: compiler, uri: document.uri, dialect: dialect)
        loader.reads32 = OpenAPIVersion.minor(of: version) == "3.2"
        loader.swagger2 = version == "2.0"
        loader.documentRoot = root
        loader.indexSchemas(root, pointer: "")
        let operations = try loader.operations(root)
        let targets = try compiler.dynamicTargets()
        if let error = ContractError.first(of: loader.errors + compiler.errors) { throw error }
        compiler.finish()
        let graph = SchemaGraph(nodes: compiler.all)
        loader.seal(graph: graph, targets: targets)
        let server = root["servers"]?.items?.first
        var base = basePath ?? server.flatMap(Self.url(ofServer:)).map(Self.path(ofServer:)) ?? ""
        var warnings = loader.warnings + registry.warnings
        if basePath == nil, let warning = Self.literalVariableWarning(base, in: document) { warnings.append(warning) }
        // Every server's path counts (a request under any of them is the API's), the first's first.
        var bases = basePath.map { [$0 == "/" ? "" : $0] } ?? Self.basePaths(of: root["servers"]) ?? [""]
        if loader.swagger2, basePath == nil {
            // 2.0 has one base path, and no servers.
            base = Self.swagger2BasePath(root)
            bases = [base]
            // Said where the brace is written: the host template's path, or basePath.
            let inBasePath = root["basePath"]?.string?.contains("{") ?? false
            let pointer = inBasePath ? "/basePath" : "/x-ms-parameterized-host/hostTemplate"
            if let warning = Self.literalVariableWarning(base, in: document, at: pointer) { warnings.append(warning) }
        }
        return OpenAPIContract(
            version: version, title: root["info"]?["title"]?.string ?? "", basePath: base == "/" ? "" : base,
            operations: operations, warnings: warnings, graph: graph, basePaths: bases)
    }

    /// Indexes every schema of the document (components and inline `schema`s) so that `$id`s and
    /// anchors inside them resolve.
    private mutating func indexSchemas(_ value: Value, pointer: String) {
        guard case .object(let members) = value else {
            if case .array(let items) = value {
                for (index, item) in items.enumerated() { indexSchemas(item, pointer: pointer + "/\(index)") }
            }
            return
        }
        // An `x-` member is a Specification Extension (any JSON, nothing OpenAPI reads), except
        // in maps whose keys are names (a header called `x-request-id`).
        let inNameMap = Self.nameMaps.contains(
            pointer[(pointer.lastIndex(of: "/") ?? pointer.startIndex)...].dropFirst())
        for (key, child) in members {
            if key.hasPrefix("x-"), !inNameMap { continue }
            let childPointer = pointer + "/" + Value.escape(key)
            // (In a map of names, `description` is a name: a schema, an encoding, a header so called.)
            if !inNameMap, ["description", "summary", "title"].contains(key), child.string == nil {
                warnings.append(warn(childPointer, "\(key) should be a string (ignored)"))
                continue
            }
            if key == "schema" || key == "itemSchema" || pointer == "/components/schemas"
                || (swagger2 && pointer == "/definitions")
            {
                registry.indexSchema(document: uri, pointer: childPointer, dialect: dialect)
            } else if key == "schemas" && pointer == "/components" {
                indexSchemas(child, pointer: childPointer)
            } else if key != "example" && key != "examples" {
                indexSchemas(child, pointer: childPointer)
            }
        }
    }

    /// The objects whose keys are names the document chose (components, headers, media types…).
    private static let nameMaps: Set<Substring> = [
        "schemas", "responses", "parameters", "examples", "requestBodies", "headers", "securitySchemes", "links",
        "callbacks", "pathItems", "content", "encoding", "variables", "mapping", "webhooks", "mediaTypes",
        "additionalOperations", "definitions", "securityDefinitions",
    ]

    func warn(_ pointer: String, _ message: String, file: String? = nil) -> ContractError {
        let file = file ?? uri
        return ContractError(
            file: file, line: registry.documents[file]?.line(of: pointer), pointer: pointer, message: message)
    }

    /// Follows `$ref`s of non-schema objects (responses, parameters, …) to the object itself.
    mutating func resolve(_ value: Value, at location: SchemaLocation) throws(ContractError) -> (
        Value, SchemaLocation
    ) {
        var value = value
        var location = location
        var visited: [SchemaLocation] = []
        while let reference = value["$ref"] {
            guard let text = reference.string else {
                throw warn(location.pointer + "/$ref", "$ref must be a string", file: location.document)
            }
            let target: SchemaLocation
            do {
                target = try registry.locate(text, base: location.document)
            } catch {
                throw warn(
                    location.pointer + "/$ref", SchemaRegistry.unresolved(text, error, from: location.document),
                    file: location.document)
            }
            visited.append(location)
            if visited.contains(target) {
                let start = visited.firstIndex(of: target)!
                let path = (visited[start...] + [target]).map { Self.short($0) }.joined(separator: " → ")
                throw warn(location.pointer + "/$ref", "a $ref cycle: \(path)", file: location.document)
            }
            guard let resolved = registry.value(at: target) else {
                throw warn(location.pointer, "$ref \"\(text)\" points to nothing", file: location.document)
            }
            value = resolved
            location = target
        }
        return (value, location)
    }

    /// `responses.yml#/error` for messages: the file's name and the pointer.
    private static func short(_ location: SchemaLocation) -> String {
        let name = location.document.split(separator: "/").last.map(String.init) ?? location.document
        return name + "#" + location.pointer
    }

    mutating func schema(at location: SchemaLocation) throws(ContractError) -> SchemaValidator? {
        if let known = validators[location.key] { return known }
        if location.document != uri {
            registry.indexSchema(document: location.document, pointer: location.pointer, dialect: dialect)
        }
        let node = try compiler.compile(location)
        let validator = SchemaValidator(root: node, dynamicTargets: [:], graph: SchemaGraph(nodes: []))
        validators[location.key] = validator
        return validator
    }

    /// After compiling: every validator shares the contract's graph and dynamic targets.
    private func seal(graph: SchemaGraph, targets: [String: Schema]) {
        for validator in validators.values { validator.seal(graph: graph, targets: targets) }
    }

    /// Where a location is, with its line, for messages and reports.
    func place(_ location: SchemaLocation) -> SourcePlace {
        var place = SourcePlace(
            file: location.document, line: registry.documents[location.document]?.line(of: location.pointer),
            pointer: location.pointer)
        place.shown = compiler.shown(location)
        return place
    }

    /// Whether a path with a query or fragment was said already.
    var warnedPathQuery = false

}
