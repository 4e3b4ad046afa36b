import Contract
import Yams

/// `respond:`, `upstream:` and `rewrite:` (map local, map remote, header rewriting).
extension RuleParser {
    /// `respond: { status, headers, body | file }`.
    static func parseRespond(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> MapLocal {
        var answer = MapLocal()
        var bodySet = false
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "status": answer.status = try entry.integer(in: 200...599)
            case "headers":
                answer.headers = try parseFields(entry, path: entry.path, what: "an answer")
                if let reserved = answer.headers.first(where: { HeaderRewrite.isReserved($0.name) }) {
                    throw ConfigError(
                        key: entry.path + "." + reserved.name, line: line,
                        message: "\(reserved.name) is written by Sluice (framing and connection fields)")
                }
            case "body", "file":
                guard !bodySet else { throw entry.fail("give body or file, not both") }
                bodySet = true
                let text = try entry.string()
                if name == "file" {
                    guard !text.isEmpty else { throw entry.fail("expected a file path") }
                    answer.body = .file(text)
                } else {
                    answer.body = .text(text)
                }
            default: throw unknown(name, path: path, line: line, allowed: ["status", "headers", "body", "file"])
            }
        }
        if MapLocal.isBodiless(answer.status), bodySet, answer.body != .text("") {
            throw ConfigError(
                key: path + ".body", line: item.node.mark?.line, message: "a \(answer.status) answer has no body")
        }
        return answer
    }

    /// `upstream: URL` or `upstream: { url: URL, host: rewrite | keep }`.
    static func parseUpstream(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> MapRemote {
        func target(_ entry: ConfigLoader.Value) throws(ConfigError) -> TargetURL {
            let text = try ConfigLoader.substitutingEnvironment(try entry.string(), at: entry)
            guard let url = TargetURL(text), !url.pathAndQuery.contains("?") else {
                throw entry.fail("expected an http:// or https:// origin, with a path prefix at most (no query)")
            }
            return url
        }
        if item.node.scalar != nil { return MapRemote(target: try target(item)) }
        var url: TargetURL?
        var keepsHost = false
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "url": url = try target(entry)
            case "host":
                let text = try entry.string()
                guard text == "keep" || text == "rewrite" else { throw entry.fail("expected rewrite or keep") }
                keepsHost = text == "keep"
            default: throw unknown(name, path: path, line: line, allowed: ["url", "host"])
            }
        }
        guard let url else {
            throw ConfigError(key: path + ".url", line: item.node.mark?.line, message: "map remote needs a url")
        }
        return MapRemote(target: url, keepsHost: keepsHost)
    }

    /// `rewrite: { request: {set, add, remove}, response: {set, add, remove} }`.
    static func parseRewrite(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> Rewrite {
        var rewrite = Rewrite()
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "request": rewrite.request = try parseHeaderRewrite(entry).fields
            case "response":
                (rewrite.response, rewrite.responsePatch) = try parseHeaderRewrite(entry, allowsPatch: true)
            default: throw unknown(name, path: path, line: line, allowed: ["request", "response"])
            }
        }
        return rewrite
    }

    static func parseHeaderRewrite(_ item: ConfigLoader.Value, allowsPatch: Bool = false) throws(ConfigError)
        -> (fields: HeaderRewrite, patch: JSONPatch?)
    {
        var rewrite = HeaderRewrite()
        var patch: JSONPatch?
        for (name, value, line) in try mapping(item.node, path: item.path) {
            let entry = ConfigLoader.Value(node: value, path: item.path + "." + name)
            switch name {
            case "json_patch" where allowsPatch: patch = try parseJSONPatch(entry)
            case "set", "add":
                let fields = try parseFields(entry, path: entry.path, what: "a rewrite")
                if name == "set" { rewrite.replacing = fields } else { rewrite.adding = fields }
            case "remove":
                rewrite.removing = try entry.list().map { field throws(ConfigError) in
                    let text = try field.string()
                    guard MediaRange.isToken(text) else { throw field.fail("\"\(text)\" is not a field name") }
                    return text
                }
            default:
                throw unknown(
                    name, path: item.path, line: line,
                    allowed: ["set", "add", "remove"] + (allowsPatch ? ["json_patch"] : []))
            }
        }
        let names = rewrite.replacing.map(\.name) + rewrite.adding.map(\.name) + rewrite.removing
        if let reserved = names.first(where: HeaderRewrite.isReserved) {
            throw item.fail("\(reserved) is written by Sluice (framing and connection fields) and cannot be rewritten")
        }
        return (rewrite, patch)
    }

    /// `json_patch: [{op, path, value | from}, …]` (RFC 6902).
    static func parseJSONPatch(_ item: ConfigLoader.Value) throws(ConfigError) -> JSONPatch {
        var operations: [JSONPatch.Operation] = []
        for (index, element) in try item.list().enumerated() {
            let path = "\(item.path)[\(index)]"
            var fields: [String: (Node, Int?)] = [:]
            for (name, value, line) in try mapping(element.node, path: path) {
                guard ["op", "path", "value", "from"].contains(name) else {
                    throw unknown(name, path: path, line: line, allowed: ["op", "path", "value", "from"])
                }
                fields[name] = (value, line)
            }
            func pointer(_ name: String) throws(ConfigError) -> String {
                guard let (node, _) = fields[name] else {
                    throw ConfigError(key: path + "." + name, line: element.line, message: "missing (a JSON Pointer)")
                }
                let value = ConfigLoader.Value(node: node, path: path + "." + name)
                let text = try value.string()
                guard text.isEmpty || text.hasPrefix("/") else {
                    throw value.fail("\"\(text)\" is not a JSON Pointer (it starts with /)")
                }
                return text
            }
            func value() throws(ConfigError) -> JSONPatch.Literal {
                guard let (node, _) = fields["value"] else {
                    throw ConfigError(key: path + ".value", line: element.line, message: "missing")
                }
                let (value, text) = try jsonValue(node, path: path + ".value")
                return JSONPatch.Literal(value, text: text)
            }
            guard let (opNode, _) = fields["op"] else {
                throw ConfigError(key: path + ".op", line: element.line, message: "missing")
            }
            let opValue = ConfigLoader.Value(node: opNode, path: path + ".op")
            switch try opValue.string() {
            case "add": operations.append(.add(path: try pointer("path"), value: try value()))
            case "remove": operations.append(.remove(path: try pointer("path")))
            case "replace": operations.append(.replace(path: try pointer("path"), value: try value()))
            case "move": operations.append(.move(from: try pointer("from"), path: try pointer("path")))
            case "copy": operations.append(.copy(from: try pointer("from"), path: try pointer("path")))
            case "test": operations.append(.test(path: try pointer("path"), value: try value()))
            case let other: throw opValue.fail("expected add, remove, replace, move, copy or test, not \(other)")
            }
        }
        guard !operations.isEmpty else { throw item.fail("expected a list of operations") }
        return JSONPatch(operations)
    }

    /// A YAML value as JSON, and its JSON text: plain scalars are numbers (spelled as written),
    /// booleans and null by their spelling; quoted ones are strings.
    static func jsonValue(_ node: Node, path: String) throws(ConfigError) -> (Contract.Value, String) {
        switch node {
        case .scalar(let scalar):
            let text = scalar.string
            guard scalar.style == .plain else { return (.string(text), Contract.Value.quoted(text)) }
            switch text {
            case "null", "~", "": return (.null, "null")
            case "true": return (.bool(true), "true")
            case "false": return (.bool(false), "false")
            default:
                if let value = try? Contract.Value.parse(Array(text.utf8)), case .number = value {
                    return (value, text)
                }
                return (.string(text), Contract.Value.quoted(text))
            }
        case .mapping:
            var members: [(String, Contract.Value)] = []
            var texts: [String] = []
            for (name, value, _) in try mapping(node, path: path) {
                let (member, text) = try jsonValue(value, path: path + "." + name)
                members.append((name, member))
                texts.append(Contract.Value.quoted(name) + ":" + text)
            }
            return (.object(members), "{" + texts.joined(separator: ",") + "}")
        case .sequence(let sequence):
            var items: [Contract.Value] = []
            var texts: [String] = []
            for (index, item) in sequence.enumerated() {
                let (value, text) = try jsonValue(item, path: "\(path)[\(index)]")
                items.append(value)
                texts.append(text)
            }
            return (.array(items), "[" + texts.joined(separator: ",") + "]")
        }
    }

    /// A mapping of field names to values (`{Content-Type: application/json}`), in order.
    static func parseFields(_ item: ConfigLoader.Value, path: String, what: String) throws(ConfigError)
        -> HTTPFields
    {
        var fields = HTTPFields()
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            guard MediaRange.isToken(name) else {
                throw ConfigError(key: entry.path, line: line, message: "\"\(name)\" is not a field name")
            }
            let text = try entry.string()
            guard text.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw entry.fail("a field value in \(what) cannot hold control characters (CR, LF, NUL)")
            }
            fields.append(name: name, value: text.trimmingOWS())
        }
        return fields
    }
}
