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
            case "request": rewrite.request = try parseHeaderRewrite(entry)
            case "response": rewrite.response = try parseHeaderRewrite(entry)
            default: throw unknown(name, path: path, line: line, allowed: ["request", "response"])
            }
        }
        return rewrite
    }

    static func parseHeaderRewrite(_ item: ConfigLoader.Value) throws(ConfigError) -> HeaderRewrite {
        var rewrite = HeaderRewrite()
        for (name, value, line) in try mapping(item.node, path: item.path) {
            let entry = ConfigLoader.Value(node: value, path: item.path + "." + name)
            switch name {
            case "set", "add":
                let fields = try parseFields(entry, path: entry.path, what: "a rewrite")
                if name == "set" { rewrite.replacing = fields } else { rewrite.adding = fields }
            case "remove":
                rewrite.removing = try entry.list().map { field throws(ConfigError) in
                    let text = try field.string()
                    guard MediaRange.isToken(text) else { throw field.fail("\"\(text)\" is not a field name") }
                    return text
                }
            default: throw unknown(name, path: item.path, line: line, allowed: ["set", "add", "remove"])
            }
        }
        let names = rewrite.replacing.map(\.name) + rewrite.adding.map(\.name) + rewrite.removing
        if let reserved = names.first(where: HeaderRewrite.isReserved) {
            throw item.fail("\(reserved) is written by Sluice (framing and connection fields) and cannot be rewritten")
        }
        return rewrite
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
