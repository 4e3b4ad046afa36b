/// The JSON Schema dialects Sluice compiles: what `$schema` says, or what the OpenAPI version implies.
public enum Dialect: Sendable, Equatable {
    case draft4, draft6, draft7, draft2019, draft2020
    /// OpenAPI 3.0's Schema Object: draft-04-like with `nullable`, `discriminator`, `readOnly`/`writeOnly`.
    case openAPI30

    init?(metaSchema uri: String) {
        var text = uri
        if text.hasSuffix("#") { text.removeLast() }
        text = text.replacingOccurrences("https://", "http://")
        switch text {
        case "http://json-schema.org/draft-04/schema", "http://json-schema.org/schema": self = .draft4
        case "http://json-schema.org/draft-06/schema": self = .draft6
        case "http://json-schema.org/draft-07/schema": self = .draft7
        case "http://json-schema.org/draft/2019-09/schema": self = .draft2019
        case "http://json-schema.org/draft/2020-12/schema": self = .draft2020
        default:
            guard Self.isOpenAPIDialect(text) else { return nil }
            self = .draft2020
        }
    }

    /// OpenAPI 3.1's (and 3.2's) Schema Object dialect, 2020-12 with OpenAPI's keywords, by any of
    /// its published iterations: `…/oas/3.1/dialect/base`, `…/oas/3.1/dialect/2024-11-10`.
    static func isOpenAPIDialect(_ uri: String) -> Bool {
        let prefix = "http://spec.openapis.org/oas/"
        guard uri.hasPrefix(prefix) else { return false }
        let parts = uri.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "3.1" || parts[0] == "3.2", parts[1] == "dialect" else { return false }
        // `base`, or an iteration's date, YYYY-MM-DD.
        let name = Array(parts[2].utf8)
        let isDate =
            name.count == 10 && name[4] == UInt8(ascii: "-") && name[7] == UInt8(ascii: "-")
            && name.enumerated().allSatisfy { $0.offset == 4 || $0.offset == 7 || ($0.element &- 0x30) < 10 }
        return parts[2] == "base" || isDate
    }

    /// Before 2019-09, `$ref` makes every sibling keyword ignored.
    var refOverridesSiblings: Bool { self == .draft4 || self == .draft6 || self == .draft7 || self == .openAPI30 }
    /// The keyword that gives a schema a base URI; none in OpenAPI 3.0's (and Swagger 2.0's)
    /// Schema Object: an `id` member there is a property-like leftover (Swagger 1.2 models' names),
    /// not a URI.
    var idKeyword: String? {
        switch self {
        case .draft4: "id"
        case .openAPI30: nil
        default: "$id"
        }
    }
    var isModern: Bool { self == .draft2019 || self == .draft2020 }
}

/// Where a schema is: a document and a JSON Pointer in it.
struct SchemaLocation: Hashable {
    var document: String
    var pointer: String
    var key: String { document + "#" + pointer }
}

/// Every document a contract uses, and the names inside them (`$id`, `$anchor`,
/// `$dynamicAnchor`), so that `$ref`s resolve without the network: a document that is not loaded
/// yet is asked of the loader (files next to the contract, `contract.refs` mappings), never fetched.
public final class SchemaRegistry {
    /// Gives the document at an absolute URI (no fragment), or `nil` when there is none.
    public typealias Loader = (String) throws(ContractError) -> SourceDocument?

    private(set) var documents: [String: SourceDocument] = [:]
    private var resources: [String: SchemaLocation] = [:]
    private var anchors: [String: SchemaLocation] = [:]
    private(set) var dynamicAnchors: [String: SchemaLocation] = [:]
    /// Resources whose meta-schema declares the format-assertion vocabulary (2020-12 §7.2.2):
    /// their `format`s are asserted whatever `contract.formats` says.
    private(set) var formatAssertingResources: Set<String> = []
    /// The base URI and dialect at each indexed schema location.
    private var scopes: [String: (base: String, dialect: Dialect, validation: Bool)] = [:]
    private let loader: Loader?
    /// The dialect of a document without `$schema`.
    let defaultDialect: Dialect
    /// Warnings worth saying once (an unknown keyword, a `$ref` where it does not belong).
    public private(set) var warnings: [ContractError] = []

    public init(defaultDialect: Dialect = .draft2020, loader: Loader? = nil) {
        self.defaultDialect = defaultDialect
        self.loader = loader
        for (document, dialect) in MetaSchemas.documents { add(document, dialect: dialect) }
    }

    /// Adds a document whose root is a schema.
    public func add(_ document: SourceDocument, dialect: Dialect? = nil) {
        documents[document.uri] = document
        if resources[document.uri] == nil {
            resources[document.uri] = SchemaLocation(document: document.uri, pointer: "")
        }
        index(
            document.root, document: document.uri, pointer: "", base: document.uri, dialect: dialect ?? defaultDialect,
            validation: true)
    }

    /// Adds a document that is not itself a schema (an OpenAPI document): only its root is
    /// registered; schemas inside it are indexed with ``indexSchema(at:dialect:)``.
    public func addContainer(_ document: SourceDocument) {
        documents[document.uri] = document
        if resources[document.uri] == nil {
            resources[document.uri] = SchemaLocation(document: document.uri, pointer: "")
        }
    }

    /// Indexes the schema at `pointer` of a container document.
    func indexSchema(document: String, pointer: String, dialect: Dialect) {
        guard let value = documents[document]?.root.resolve(pointer: pointer) else { return }
        index(value, document: document, pointer: pointer, base: document, dialect: dialect, validation: true)
    }

    func warn(_ warning: ContractError) { warnings.append(warning) }

    /// Indexes every schema of an OpenAPI document (`schema`, `itemSchema`, `components/schemas`).
    private func indexContainedSchemas(_ value: Value, document: String, pointer: String) {
        if case .array(let items) = value {
            for (index, item) in items.enumerated() {
                indexContainedSchemas(item, document: document, pointer: pointer + "/\(index)")
            }
            return
        }
        guard case .object(let members) = value else { return }
        for (key, child) in members where key != "example" && key != "examples" {
            let childPointer = pointer + "/" + Value.escape(key)
            if key == "schema" || key == "itemSchema" || pointer == "/components/schemas" {
                indexSchema(document: document, pointer: childPointer, dialect: defaultDialect)
            } else {
                indexContainedSchemas(child, document: document, pointer: childPointer)
            }
        }
    }

    func document(_ uri: String) throws(ContractError) -> SourceDocument {
        if let document = documents[uri] { return document }
        if let loaded = try loader?(uri) {
            if loaded.root["openapi"]?.string != nil {
                // Another OpenAPI document (shared components): its schemas, wherever they are,
                // are indexed as the main document's are, so their `$id`s and anchors resolve.
                addContainer(loaded)
                indexContainedSchemas(loaded.root, document: loaded.uri, pointer: "")
            } else {
                add(loaded)
            }
            return loaded
        }
        throw ContractError(file: uri, line: nil, pointer: nil, message: "no such document (not loaded, not mapped)")
    }

    func value(at location: SchemaLocation) -> Value? {
        documents[location.document]?.root.resolve(pointer: location.pointer)
    }

    func scope(at location: SchemaLocation) -> (base: String, dialect: Dialect, validation: Bool) {
        if let known = scopes[location.key] { return known }
        // Not indexed (a pointer into an unknown keyword): the nearest indexed ancestor's scope.
        var pointer = location.pointer
        while let slash = pointer.lastIndex(of: "/") {
            pointer = String(pointer[..<slash])
            if let known = scopes[location.document + "#" + pointer] {
                if let value = value(at: location) {
                    index(
                        value, document: location.document, pointer: location.pointer, base: known.base,
                        dialect: known.dialect, validation: known.validation)
                    if let indexed = scopes[location.key] { return indexed }
                }
                return known
            }
        }
        return (location.document, defaultDialect, true)
    }

    /// The message of a reference that cannot be followed, to be said where the `$ref` is
    /// written: what `locate` found, and in which file when it is another.
    static func unresolved(_ reference: String, _ error: ContractError, from document: String) -> String {
        let said = error.message.hasPrefix("$ref") ? error.message : "$ref \"\(reference)\": \(error.message)"
        return error.file == document ? said : said + " (\(error.file))"
    }

    /// The schema a reference names, resolved against `base`.
    func locate(_ reference: String, base: String) throws(ContractError) -> SchemaLocation {
        let absolute = URIReference.resolve(reference, against: base)
        let parsed = URIReference(absolute)
        let resource = parsed.withoutFragment
        let fragment = Self.percentDecode(parsed.fragment ?? "")
        if fragment.isEmpty || fragment.hasPrefix("/") {
            if resources[resource] == nil { _ = try document(resource) }
            guard let root = resources[resource] else {
                throw ContractError(file: resource, line: nil, pointer: nil, message: "no schema with this URI")
            }
            let location = SchemaLocation(document: root.document, pointer: root.pointer + fragment)
            guard value(at: location) != nil else {
                throw ContractError(
                    file: root.document, line: documents[root.document]?.line(of: location.pointer),
                    pointer: location.pointer, message: "$ref \"\(reference)\" points to nothing")
            }
            return location
        }
        if resources[resource] == nil && documents[resource] == nil { _ = try document(resource) }
        var found = anchors[resource + "#" + fragment]
        if found == nil, documents[resource] != nil {
            // A file whose root has an `$id`: its anchors are named under the `$id`, and reached
            // through the file's own URI too (as the reference implementations do).
            let base = scope(at: SchemaLocation(document: resource, pointer: "")).base
            if base != resource { found = anchors[base + "#" + fragment] }
        }
        guard let anchor = found else {
            throw ContractError(
                file: resource, line: nil, pointer: nil,
                message: "no anchor \"\(fragment)\" (from $ref \"\(reference)\")")
        }
        return anchor
    }

    /// The name under which a `$recursiveAnchor: true` is kept among the dynamic anchors (no
    /// `$dynamicAnchor` can have it: anchors are plain names).
    static let recursiveAnchor = "<recursive>"

    /// The `$dynamicAnchor` named `name` in the resource `resource`, if it has one.
    func dynamicAnchor(_ name: String, in resource: String) -> SchemaLocation? {
        dynamicAnchors[resource + "#" + name]
    }

    static func percentDecode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Indexing

    private static let singleSchemaKeywords = [
        "additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else",
        "unevaluatedItems", "unevaluatedProperties", "items",
    ]
    private static let schemaArrayKeywords = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]
    private static let schemaMapKeywords = [
        "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies",
    ]

    private func index(
        _ value: Value, document: String, pointer: String, base: String, dialect: Dialect, validation: Bool
    ) {
        guard case .object(let members) = value else { return }
        var base = base
        var dialect = dialect
        var validation = validation
        var assertsFormats = false
        if let metaSchema = value["$schema"]?.string {
            if let known = Dialect(metaSchema: metaSchema) {
                dialect = known
                validation = true
            } else if let custom = customDialect(metaSchema) {
                dialect = custom.dialect
                validation = custom.validation
                assertsFormats = custom.assertsFormats
            }
        }
        defer { if assertsFormats { formatAssertingResources.insert(base) } }
        let refHidesSiblings = dialect.refOverridesSiblings && value["$ref"] != nil
        if !refHidesSiblings, let keyword = dialect.idKeyword, let id = value[keyword]?.string {
            let resolved = URIReference.resolve(id, against: base)
            let parsed = URIReference(resolved)
            if dialect.isModern {
                base = parsed.withoutFragment
                resources[base] = SchemaLocation(document: document, pointer: pointer)
            } else if id.hasPrefix("#") {
                anchors[parsed.withoutFragment + "#" + (parsed.fragment ?? "")] = SchemaLocation(
                    document: document, pointer: pointer)
            } else {
                base = parsed.withoutFragment
                resources[base] = SchemaLocation(document: document, pointer: pointer)
                if let fragment = parsed.fragment, !fragment.isEmpty {
                    anchors[base + "#" + fragment] = SchemaLocation(document: document, pointer: pointer)
                }
            }
        }
        let location = SchemaLocation(document: document, pointer: pointer)
        if dialect.isModern {
            if let anchor = value["$anchor"]?.string { anchors[base + "#" + anchor] = location }
            if let anchor = value["$dynamicAnchor"]?.string {
                anchors[base + "#" + anchor] = location
                dynamicAnchors[base + "#" + anchor] = location
            }
            // 2019-09's `$recursiveAnchor: true` is a dynamic anchor without a name (`$recursiveRef`
            // finds it the way `$dynamicRef` finds a named one); it is never a `$ref` target.
            if dialect == .draft2019, value["$recursiveAnchor"]?.bool == true {
                dynamicAnchors[base + "#" + Self.recursiveAnchor] = location
            }
        }
        scopes[location.key] = (base, dialect, validation)
        for (key, child) in members {
            let childPointer = pointer + "/" + Value.escape(key)
            if Self.singleSchemaKeywords.contains(key), case .object = child {
                index(
                    child, document: document, pointer: childPointer, base: base, dialect: dialect,
                    validation: validation)
            }
            if Self.schemaArrayKeywords.contains(key), case .array(let items) = child {
                for (position, item) in items.enumerated() {
                    index(
                        item, document: document, pointer: childPointer + "/\(position)", base: base, dialect: dialect,
                        validation: validation)
                }
            }
            if Self.schemaMapKeywords.contains(key), case .object(let entries) = child {
                for (name, item) in entries {
                    index(
                        item, document: document, pointer: childPointer + "/" + Value.escape(name), base: base,
                        dialect: dialect, validation: validation)
                }
            }
        }
    }

    /// A `$schema` naming a meta-schema Sluice has as a document: its own `$schema` gives the
    /// dialect, its `$vocabulary` whether the validation vocabulary is on.
    private func customDialect(_ uri: String) -> (dialect: Dialect, validation: Bool, assertsFormats: Bool)? {
        let resource = URIReference(uri).withoutFragment
        let meta: Value
        if let location = resources[resource], let value = value(at: location) {
            meta = value
        } else if let loaded = try? loader?(resource) {
            documents[loaded.uri] = loaded
            meta = loaded.root
        } else {
            return nil
        }
        let dialect = meta["$schema"]?.string.flatMap { Dialect(metaSchema: $0) } ?? .draft2020
        guard let vocabulary = meta["$vocabulary"]?.members else { return (dialect, true, false) }
        let validation = vocabulary.contains { $0.0.hasSuffix("/vocab/validation") }
        // The format-assertion vocabulary, required or not: Sluice knows it, so it applies.
        let assertsFormats = vocabulary.contains { $0.0.hasSuffix("/vocab/format-assertion") }
        return (dialect, validation, assertsFormats)
    }
}
