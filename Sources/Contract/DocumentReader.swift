import Yams

/// A contract file read whole: its root value and, for messages, the line where each object or
/// array starts (keyed by JSON Pointer).
public struct SourceDocument: Sendable {
    /// The file's absolute URI (`file:///…`, or the `http(s)://` URI it stands for).
    public let uri: String
    public let root: Value
    public let lines: [String: Int]

    public init(uri: String, root: Value, lines: [String: Int] = [:]) {
        self.uri = uri
        self.root = root
        self.lines = lines
    }

    /// The line of the nearest object or array at or above `pointer`.
    public func line(of pointer: String) -> Int? {
        var pointer = pointer
        while true {
            if let line = lines[pointer] { return line }
            guard let slash = pointer.lastIndex(of: "/") else { return nil }
            pointer = String(pointer[..<slash])
        }
    }

    /// Reads JSON or YAML text (JSON first when it looks like JSON: exact numbers, faster).
    public static func read(text: String, uri: String) throws(ContractError) -> SourceDocument {
        let firstByte = text.utf8.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if firstByte == UInt8(ascii: "{") || firstByte == UInt8(ascii: "[") {
            var reader = JSONReader(bytes: Array(text.utf8), recordLines: true)
            do throws(JSONReader.Failure) {
                let root = try reader.document()
                return SourceDocument(uri: uri, root: root, lines: reader.lines)
            } catch {
                // JSON-looking YAML (flow style with comments, say) still gets a chance; text
                // nested too deep does not (YAML would read it no deeper).
                if !error.isNesting, let yaml = try? readYAML(text: text, uri: uri) { return yaml }
                throw ContractError(file: uri, line: error.line, pointer: nil, message: error.message)
            }
        }
        // A byte order mark may start a YAML stream (YAML 1.2 §5.2); libyaml refuses one in
        // UTF-8 text handed over as a string.
        if text.unicodeScalars.first == "\u{FEFF}" { return try readYAML(text: String(text.dropFirst()), uri: uri) }
        return try readYAML(text: text, uri: uri)
    }

    /// Most levels a YAML text may be able to nest and still be read, its stack sized for it.
    /// libyaml takes time quadratic in the real depth (100,000 levels: 21 s); large real
    /// documents have a few thousand opening brackets (OpenAI's 2.9 MB: 5,614).
    static let yamlNestingLimit = 50_000

    private static func readYAML(text: String, uri: String) throws(ContractError) -> SourceDocument {
        // Yams composes recursively, about 2 KiB of stack a level: a text nested deep enough
        // would overflow the stack and end the process. One that may nest deeper than a thread's
        // usual stack holds is composed on a thread whose stack fits its bound (virtual memory,
        // touched only as deep as it really goes); the rest is refused.
        let bound = YAMLBridge.nestingBound(text)
        guard bound <= yamlNestingLimit else {
            throw ContractError(
                file: uri, line: nil, pointer: nil,
                message:
                    "may nest \(bound) levels deep (opening brackets, indentation): refused, as documents are read 512 deep"
            )
        }
        let read = { () -> Result<SourceDocument, ContractError> in
            Result { () throws(ContractError) -> SourceDocument in try composeYAML(text: text, uri: uri) }
        }
        // Aliases share the node of their anchor, so a chain of them (`b: &b [*a]`, `c: &c [*b]`,
        // …) composes into a tree as deep as the chain while the text looks shallow. Reading it
        // stops 512 deep, but letting the tree go recurses as deep as it is: a text that may hold
        // aliases is read, and let go, on a stack that fits the longest chain its size allows
        // (a link takes at least 8 bytes of text and less than 512 bytes of stack). A text
        // without anchors has no aliases to chain.
        let anchors = YAMLBridge.anchorCount(text)
        let aliasStack = anchors > 0 ? min(text.utf8.count * 64, (anchors + 1) * bound * 1024, 16 << 30) : 0
        guard bound > 1_000 || aliasStack > 4 << 20 else { return try read().get() }
        let stack = max(bound > 1_000 ? 32 << 20 + bound * 4 << 10 : 0, aliasStack)
        guard let result = LargeStack.run(bytes: stack, read) else {
            throw ContractError(
                file: uri, line: nil, pointer: nil,
                message:
                    "may nest \(bound) levels deep\(anchors > 0 ? " and chain \(anchors) anchors" : ""): no thread with a \(stack >> 20) MiB stack to read it on"
            )
        }
        return try result.get()
    }

    private static func composeYAML(text: String, uri: String) throws(ContractError) -> SourceDocument {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text, YAMLBridge.coreSchema)
        } catch let error as YamlError {
            throw ContractError(
                file: uri, line: YAMLBridge.line(of: error), pointer: nil, message: "not YAML: \(error)")
        } catch {
            throw ContractError(file: uri, line: nil, pointer: nil, message: "not YAML: \(error)")
        }
        guard let node else { throw ContractError(file: uri, line: nil, pointer: nil, message: "the file is empty") }
        // Aliases share their node: expanded, a few hundred bytes can stand for billions of
        // values ("billion laughs"). What a text may expand to is bounded by its size.
        var bridge = YAMLBridge(uri: uri, budget: 100_000 + 4 * text.utf8.count)
        let root = try bridge.value(node, pointer: "", depth: 0)
        return SourceDocument(uri: uri, root: root, lines: bridge.lines)
    }
}

/// Yams nodes to values, with lines.
private struct YAMLBridge {
    let uri: String
    var lines: [String: Int] = [:]
    /// Values still to be made: aliases expanded count each time.
    var budget: Int

    init(uri: String, budget: Int) {
        self.uri = uri
        self.budget = budget
    }

    /// At least as many levels as `text` can nest: every opening bracket (a flow collection,
    /// or text that looks like one), plus twice the longest run of spaces, dashes, question
    /// marks and colons that starts a line (block collections nest by indentation, and `- - x`
    /// or `? ` nest on one line). Never less than the truth; far more for flow-heavy text.
    static func nestingBound(_ text: String) -> Int {
        var opens = 0
        var longestPrefix = 0
        var prefix = 0
        var atLineStart = true
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"): opens += 1
            case 0x0A:
                atLineStart = true
                prefix = 0
                continue
            default: break
            }
            guard atLineStart else { continue }
            switch byte {
            case 0x20, 0x09, UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"):
                prefix += 1
                longestPrefix = max(longestPrefix, prefix)
            default: atLineStart = false
            }
        }
        return opens + 2 * longestPrefix + 4
    }

    /// At least as many anchors (`&name` where a node may start) as `text` holds.
    static func anchorCount(_ text: String) -> Int {
        var count = 0
        var previous: UInt8 = 0x0A
        var afterAmpersand = false
        for byte in text.utf8 {
            if afterAmpersand, byte != 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D { count += 1 }
            afterAmpersand = false
            if byte == UInt8(ascii: "&") {
                switch previous {
                case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","),
                    UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "?"):
                    afterAmpersand = true
                default: break
                }
            }
            previous = byte
        }
        return count
    }

    /// YAML 1.2's core schema, which OpenAPI recommends: only `true` and `false` (any case style)
    /// are booleans, and `yes`, `no`, `on`, `off` are strings, as are sexagesimal numbers and
    /// dates; plus merge keys (`<<: *base`), a YAML 1.1 type that most tools still apply. (Yams'
    /// default resolver is YAML 1.1's.) Made once, as its patterns compile to regular expressions
    /// (once per file, a description of 1,500 files took 0.6 s longer to load); it is immutable,
    /// and `NSRegularExpression` may be shared across threads.
    nonisolated(unsafe) static let coreSchema: Resolver =
        // The patterns are fixed: a failure here is a programming error.
        try! Resolver.basic
        .appending(.null, "^(?:~|null|Null|NULL|)$")
        .appending(.bool, "^(?:true|True|TRUE|false|False|FALSE)$")
        .appending(.int, "^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
        .appending(
            .float,
            "^(?:[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))$"
        )
        .appending(.merge, "^<<$")

    /// A core-schema number as JSON spells it: `+1.5` → `1.5`, `.5` → `0.5`, `1.` → `1`,
    /// `1.e3` → `1e3`, `0123` → `123`.
    static func jsonSpelling(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        var sign: [UInt8] = []
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            if first == UInt8(ascii: "-") { sign = [first] }
            bytes.removeFirst()
        }
        let e = bytes.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? bytes.endIndex
        var mantissa = Array(bytes[..<e])
        if mantissa.last == UInt8(ascii: ".") { mantissa.removeLast() }
        if mantissa.first == UInt8(ascii: ".") { mantissa.insert(UInt8(ascii: "0"), at: 0) }
        while mantissa.count > 1, mantissa[0] == UInt8(ascii: "0"), mantissa[1] != UInt8(ascii: ".") {
            mantissa.removeFirst()
        }
        return sign + mantissa + bytes[e...]
    }

    static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default: return nil
        }
    }

    mutating func value(_ node: Node, pointer: String, depth: Int) throws(ContractError) -> Value {
        guard depth < 512 else {
            // The pointer's first levels say where: 512 more would only fill the screen.
            let shown = pointer.split(separator: "/", omittingEmptySubsequences: false).prefix(24)
            throw ContractError(
                file: uri, line: node.mark?.line, pointer: shown.joined(separator: "/") + "/…",
                message: "nested deeper than 512")
        }
        budget -= 1
        guard budget >= 0 else {
            throw ContractError(
                file: uri, line: node.mark?.line, pointer: pointer,
                message: "its aliases expand to more values than its size allows (a \"billion laughs\" document?)")
        }
        switch node {
        case .scalar(let scalar):
            // The root's own scalars (`openapi`, `jsonSchemaDialect`, `basePath`) have lines of
            // their own: a finding about one points at it, not at the document's first line.
            if depth == 1, let line = node.mark?.line { lines[pointer] = line }
            switch node.tag.description {
            case Tag.Name.null.rawValue: return .null
            case Tag.Name.bool.rawValue:
                return .bool(scalar.string.lowercased() == "true")
            case Tag.Name.int.rawValue, Tag.Name.float.rawValue:
                let text = scalar.string
                if let number = Number(text: YAMLBridge.jsonSpelling(text)) { return .number(number) }
                if let integer = Int(text) { return .number(Number(integer)) }
                // 0x1F and 0o17 (the core schema's other integers).
                if text.count > 2, let radix = ["0x": 16, "0o": 8][String(text.prefix(2))],
                    let integer = Int(text.dropFirst(2), radix: radix)
                {
                    return .number(Number(integer))
                }
                // .inf and .nan have no JSON value: kept as written.
                return .string(text)
            default: return .string(scalar.string)
            }
        case .sequence(let sequence):
            if let line = node.mark?.line { lines[pointer] = line }
            var items: [Value] = []
            items.reserveCapacity(sequence.count)
            for (index, item) in sequence.enumerated() {
                items.append(try value(item, pointer: pointer + "/\(index)", depth: depth + 1))
            }
            return .array(items)
        case .mapping(let mapping):
            var members: [(String, Value)] = []
            members.reserveCapacity(mapping.count)
            var seen = Set<String>()
            // Merged mappings first: the lines of the mapping's own keys, read after, win.
            var merged: [(String, Value)] = []
            for (keyNode, valueNode) in mapping where keyNode.tag.description == Tag.Name.merge.rawValue {
                try merge(valueNode, into: &merged, pointer: pointer, depth: depth)
            }
            for (keyNode, valueNode) in mapping where keyNode.tag.description != Tag.Name.merge.rawValue {
                guard case .scalar(let keyScalar) = keyNode else {
                    throw ContractError(
                        file: uri, line: keyNode.mark?.line, pointer: pointer,
                        message: "a mapping key that is not a scalar")
                }
                let key = keyScalar.string
                guard seen.insert(key).inserted else {
                    throw ContractError(
                        file: uri, line: keyNode.mark?.line, pointer: pointer + "/" + Value.escape(key),
                        message: "duplicate key \"\(key)\"")
                }
                members.append(
                    (key, try value(valueNode, pointer: pointer + "/" + Value.escape(key), depth: depth + 1)))
            }
            // The mapping's own keys win over merged ones (YAML 1.1's merge type).
            for member in merged where !seen.contains(member.0) { members.append(member) }
            if let line = node.mark?.line { lines[pointer] = line }
            return .object(members)
        }
    }

    /// A merge key's value (`<<: *base`, or `<<: [*a, *b]`, the earlier winning): its members
    /// that `merged` does not have yet.
    private mutating func merge(
        _ node: Node, into merged: inout [(String, Value)], pointer: String, depth: Int
    ) throws(ContractError) {
        let sources: [Node] =
            if case .sequence(let sequence) = node { Array(sequence) } else { [node] }
        for source in sources {
            guard case .mapping = source,
                case .object(let members) = try value(source, pointer: pointer, depth: depth + 1)
            else {
                throw ContractError(
                    file: uri, line: source.mark?.line, pointer: pointer,
                    message: "a merge key (<<) takes a mapping or a list of mappings")
            }
            for member in members where !merged.contains(where: { $0.0 == member.0 }) { merged.append(member) }
        }
    }
}

/// Where something is written in a contract: a file, the line, a JSON Pointer.
public struct SourcePlace: Sendable, Hashable, CustomStringConvertible {
    /// The file's URI (`file:///…`).
    public var file: String
    public var line: Int?
    public var pointer: String
    /// As messages say a schema's location (`#/paths/…`, `paths/orders.yaml#/…`); empty when
    /// not known.
    public var shown = ""

    public init(file: String, line: Int?, pointer: String) {
        self.file = file
        self.line = line
        self.pointer = pointer
    }

    /// The file's path when it is a local file (as on disk: `my schemas.yaml`, not the URI's
    /// `my%20schemas.yaml`), else its URI.
    public var path: String { ContractError.shownPath(file) }

    /// `openapi/list.yml:12 #/responses/200`.
    public var description: String {
        path + (line.map { ":\($0)" } ?? "") + " #" + (pointer.isEmpty ? "/" : pointer)
    }
}

/// A contract that cannot be loaded or understood: where, and why.
public struct ContractError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var line: Int?
    public var pointer: String?
    public var message: String
    /// The document's further errors, in file order, when loading went on past this one (an
    /// OpenAPI document's operations are read one by one: each broken one is said).
    public var others: [ContractError] = []

    public init(file: String, line: Int?, pointer: String?, message: String) {
        self.file = file
        self.line = line
        self.pointer = pointer
        self.message = message
    }

    /// A `file://` URI as the path on disk (percent-decoded); any other URI as it is.
    public static func shownPath(_ file: String) -> String {
        file.hasPrefix("file://") ? SchemaRegistry.percentDecode(String(file.dropFirst(7))) : file
    }

    public var description: String {
        var place = ContractError.shownPath(file)
        if let line { place += ":\(line)" }
        if let pointer { place += " #" + (pointer.isEmpty ? "/" : pointer) }
        let more =
            others.isEmpty
            ? ""
            : " (and \(others.count) more error\(others.count == 1 ? "" : "s"): `sluice contract lint` lists them, with `--schema` for a JSON Schema)"
        return place + ": " + message + more
    }

    /// The first of `errors` in file order, carrying the rest (each said once: operations that
    /// share a broken part each find it); `nil` for none.
    static func first(of errors: [ContractError]) -> ContractError? {
        var seen = Set<String>()
        let sorted = errors.filter { seen.insert($0.description).inserted }
            .sorted { ($0.file, $0.line ?? 0) < ($1.file, $1.line ?? 0) }
        guard var first = sorted.first else { return nil }
        first.others = Array(sorted.dropFirst())
        return first
    }
}
