import Contract
import Yams

/// Reads `rules:` and `defaults:` (the keys inside a rule are documented in ``ruleKeys``).
enum RuleParser {
    static func parseRules(_ value: ConfigLoader.Value) throws(ConfigError) -> [Rule] {
        let items = try value.list()
        var rules: [Rule] = []
        var names = Set<String>()
        for (index, item) in items.enumerated() {
            let path = "rules[\(index)]"
            let rule = try parseRule(item.node, path: path, defaultName: "rule \(index + 1)", allowMatch: true)
            guard names.insert(rule.name).inserted else {
                throw ConfigError(
                    key: path + ".name", line: item.node.mark?.line, message: "duplicate rule name \(rule.name)")
            }
            rules.append(rule)
        }
        return rules
    }

    static func parseDefaults(_ value: ConfigLoader.Value) throws(ConfigError) -> Rule {
        if value.node.isNull {
            return Rule(name: "defaults")
        }
        return try parseRule(value.node, path: "defaults", defaultName: "defaults", allowMatch: false)
    }

    static func mapping(_ node: Node, path: String) throws(ConfigError) -> [(String, Node, Int?)] {
        guard let mapping = node.mapping else {
            throw ConfigError(key: path, line: node.mark?.line, message: "expected a mapping")
        }
        var seen = Set<String>()
        var entries: [(String, Node, Int?)] = []
        for (key, value) in mapping {
            let name = key.string ?? ""
            guard seen.insert(name).inserted else {
                throw ConfigError(key: path + "." + name, line: key.mark?.line, message: "duplicate key")
            }
            entries.append((name, value, key.mark?.line))
        }
        return entries
    }

    static func unknown(_ name: String, path: String, line: Int?, allowed: [String]) -> ConfigError {
        let hint = allowed.min {
            ConfigLoader.distance(Array(name.utf8), Array($0.utf8))
                < ConfigLoader.distance(Array(name.utf8), Array($1.utf8))
        }.flatMap {
            ConfigLoader.distance(Array(name.utf8), Array($0.utf8)) <= 3 ? $0 : nil
        }
        let suffix = hint.map { " (did you mean \($0)?)" } ?? " (expected one of: \(allowed.joined(separator: ", ")))"
        return ConfigError(key: path + "." + name, line: line, message: "unknown key" + suffix)
    }

    private static func parseRule(_ node: Node, path: String, defaultName: String, allowMatch: Bool) throws(ConfigError)
        -> Rule
    {
        var rule = Rule(name: defaultName)
        let allowed =
            allowMatch
            ? [
                "name", "match", "accept", "strip_json_nulls", "redirects", "cache", "intercept", "tls", "proxy",
                "contract", "respond", "upstream", "rewrite", "faults",
            ]
            : ["accept", "strip_json_nulls", "cache", "tls", "rewrite"]
        for (name, value, line) in try mapping(node, path: path) {
            let keyPath = path + "." + name
            let item = ConfigLoader.Value(node: value, path: keyPath)
            guard allowed.contains(name) else {
                if !allowMatch, name == "redirects" {
                    throw ConfigError(
                        key: keyPath, line: line, message: "set the default redirect policy with redirects.policy")
                }
                throw unknown(name, path: path, line: line, allowed: allowed)
            }
            switch name {
            case "name":
                let text = try item.string().trimmingOWS()
                guard !text.isEmpty else { throw item.fail("a rule name cannot be empty") }
                rule.name = text
            case "match": rule.match = try parseMatch(value, path: keyPath)
            case "accept": rule.accept = try parseAccept(value, path: keyPath)
            case "strip_json_nulls": rule.stripJSONNulls = try parseStripping(item)
            case "redirects":
                let text = try item.string()
                guard let policy = Configuration.RedirectPolicy(rawValue: text) else {
                    throw item.fail("expected pass, follow or refuse, not \(text)")
                }
                rule.redirects = policy
            case "cache": rule.cache = try parseCache(item, path: keyPath)
            case "contract": rule.contract = try parseContract(item, path: keyPath)
            case "intercept": rule.intercept = try item.bool()
            case "proxy":
                let text = try ConfigLoader.substitutingEnvironment(try item.string(), at: item)
                if text == "none" || text == "direct" {
                    rule.proxy = .direct
                } else {
                    switch ParentProxy.parse(text) {
                    case .success(let parent): rule.proxy = .parent(parent)
                    case .failure(let error): throw item.fail("proxy: \(error) (or none)")
                    }
                }
            case "tls":
                let trust = try parseTrust(item, path: keyPath)
                if !allowMatch, !trust.verify {
                    throw item.fail("verify: false is allowed only in a rule that names its hosts, never in defaults")
                }
                rule.tls = trust
            case "respond": rule.respond = try parseRespond(item, path: keyPath)
            case "upstream": rule.upstream = try parseUpstream(item, path: keyPath)
            case "rewrite": rule.rewrite = try parseRewrite(item, path: keyPath)
            case "faults": rule.faults = try parseFaults(item, path: keyPath)
            default: break
            }
        }
        if rule.respond != nil, rule.upstream != nil {
            throw ConfigError(
                key: path + ".upstream", line: node.mark?.line,
                message: "a rule either answers itself (respond) or maps to another origin (upstream), not both")
        }
        return rule
    }

    /// `contract: { openapi: PATH | schema: PATH, on_violation, requests, undocumented, base_path, refs, formats }`.
    private static func parseContract(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> ContractRule {
        var source: ContractRule.Source?
        var settings: [(String, ConfigLoader.Value)] = []
        let allowed = ["openapi", "schema", "on_violation", "requests", "undocumented", "base_path", "refs", "formats"]
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "openapi", "schema":
                guard source == nil else { throw entry.fail("name one document: openapi or schema") }
                let file = try entry.string()
                source = name == "openapi" ? .openAPI(file) : .schema(file)
            case _ where allowed.contains(name): settings.append((name, entry))
            default: throw unknown(name, path: path, line: line, allowed: allowed)
            }
        }
        guard let source else {
            throw ConfigError(key: path, line: item.node.mark?.line, message: "a contract names openapi: or schema:")
        }
        var contract = ContractRule(source: source)
        for (name, entry) in settings {
            func choice<T: RawRepresentable>(_: T.Type, _ words: String) throws(ConfigError) -> T
            where T.RawValue == String {
                let text = try entry.string()
                guard let value = T(rawValue: text) else { throw entry.fail("expected \(words), not \(text)") }
                return value
            }
            switch name {
            case "on_violation": contract.onViolation = try choice(ContractRule.Mode.self, "enforce or report")
            case "requests": contract.requests = try choice(ContractRule.RequestMode.self, "off, report or enforce")
            case "undocumented":
                contract.undocumented = try choice(ContractRule.Undocumented.self, "pass, report or enforce")
            case "formats": contract.formats = try choice(FormatMode.self, "annotate or assert")
            case "base_path":
                let text = try entry.string()
                guard text.isEmpty || text.hasPrefix("/") else { throw entry.fail("a base path starts with /") }
                contract.basePath = text.hasSuffix("/") ? String(text.dropLast()) : text
            case "refs":
                for (uri, value, _) in try mapping(entry.node, path: entry.path) {
                    contract.refs[uri] = try ConfigLoader.Value(node: value, path: entry.path + "." + uri).string()
                }
            default: break
            }
        }
        return contract
    }

    /// `cache: false`, `cache: true` or `cache: { store: …, ttl: … }`.
    private static func parseCache(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> CacheRule {
        if item.node.scalar != nil {
            guard let flag = item.node.bool else {
                throw item.fail("expected true, false or a mapping with store and ttl")
            }
            return CacheRule(store: flag)
        }
        var settings = CacheRule()
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "store": settings.store = try entry.bool()
            case "ttl":
                let milliseconds = try entry.milliseconds()
                guard milliseconds >= 1000 else { throw entry.fail("a ttl shorter than 1s would never be fresh") }
                settings.ttl = Int64(milliseconds / 1000)
            default: throw unknown(name, path: path, line: line, allowed: ["store", "ttl"])
            }
        }
        return settings
    }

    /// `tls: { pins: [...], ca_file: PATH, verify: true, min_version: "1.2", client_certificate: PEM,
    /// client_key: PEM }`.
    private static func parseTrust(_ item: ConfigLoader.Value, path: String) throws(ConfigError) -> UpstreamTrust {
        var trust = UpstreamTrust()
        for (name, value, line) in try mapping(item.node, path: path) {
            let entry = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "pins":
                trust.pins = try entry.list().map { pin throws(ConfigError) in
                    let text = try pin.string()
                    guard text.hasPrefix("sha256//"), text.count > 8 else {
                        throw pin.fail("a pin is sha256//BASE64 of the public key (SubjectPublicKeyInfo)")
                    }
                    return text
                }
            case "ca_file":
                let text = try entry.string()
                guard !text.isEmpty else { throw entry.fail("expected a PEM file path") }
                trust.caFile = text
            case "client_certificate", "client_key":
                let text = try entry.string()
                guard !text.isEmpty else { throw entry.fail("expected a PEM file path") }
                if name == "client_certificate" { trust.clientCertificate = text } else { trust.clientKey = text }
            case "verify": trust.verify = try entry.bool()
            case "min_version":
                guard let version = TLSVersion(rawValue: try entry.string()) else {
                    throw entry.fail("expected 1.2 or 1.3")
                }
                trust.minVersion = version
            default:
                throw unknown(
                    name, path: path, line: line,
                    allowed: ["pins", "ca_file", "verify", "min_version", "client_certificate", "client_key"])
            }
        }
        if trust.clientKey != nil, trust.clientCertificate == nil {
            throw ConfigLoader.Value(node: item.node, path: path).fail("client_key needs client_certificate")
        }
        return trust
    }

    static func parseStripping(_ item: ConfigLoader.Value) throws(ConfigError) -> NullStripper.Mode? {
        if let scalar = item.node.scalar, scalar.string == "all" { return .all }
        guard let flag = item.node.bool else { throw item.fail("expected true, false or all") }
        return flag ? .members : nil
    }

    private static func parseMatch(_ node: Node, path: String) throws(ConfigError) -> RuleMatch {
        var match = RuleMatch()
        let allowed = ["host", "path", "methods"]
        for (name, value, line) in try mapping(node, path: path) {
            let item = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "host", "path":
                let text = try item.string()
                if name == "host", let refusal = Glob.portRefusal(text) { throw item.fail(refusal.message) }
                switch Glob.parse(text, kind: name == "host" ? .host : .path) {
                case .success(let glob):
                    if name == "host" { match.host = glob } else { match.path = glob }
                case .failure(let error):
                    throw item.fail("bad glob \"\(text)\": \(error.message)")
                }
            case "methods":
                match.methods = try item.list().map { method throws(ConfigError) in
                    let text = try method.string()
                    guard MediaRange.isToken(text) else { throw method.fail("\"\(text)\" is not a method") }
                    return text.uppercased()
                }
            default:
                throw unknown(name, path: path, line: line, allowed: allowed)
            }
        }
        return match
    }

    private static func parseAccept(_ node: Node, path: String) throws(ConfigError) -> Acceptance {
        var acceptance = Acceptance()
        if node.scalar.map({ $0.string.isEmpty }) == true { return acceptance }
        let allowed = ["status", "content_types", "on_reject"]
        for (name, value, line) in try mapping(node, path: path) {
            let item = ConfigLoader.Value(node: value, path: path + "." + name)
            switch name {
            case "status":
                var ranges: [ClosedRange<Int>] = []
                var spelled: [String] = []
                for entry in try item.list() {
                    let text = try entry.string()
                    guard let range = StatusSet.parseItem(text) else {
                        throw entry.fail(
                            "bad status range \"\(text)\": expected a code (100-599), \"200-299\" or \"2xx\"")
                    }
                    ranges.append(range)
                    spelled.append(text.trimmingOWS())
                }
                guard !ranges.isEmpty else { throw item.fail("an empty status list would reject every response") }
                acceptance.status = StatusSet(ranges: ranges, spelled: spelled)
            case "content_types":
                acceptance.contentTypes = try item.list().map { entry throws(ConfigError) in
                    let text = try entry.string()
                    switch MediaRange.parse(text) {
                    case .success(let range): return range
                    case .failure(let error): throw entry.fail("malformed MIME type \"\(text)\": \(error.message)")
                    }
                }
            case "on_reject":
                let text = try item.string()
                guard let mode = Acceptance.RejectMode(rawValue: text) else {
                    throw item.fail("expected enforce or report, not \(text)")
                }
                acceptance.onReject = mode
            default:
                throw unknown(name, path: path, line: line, allowed: allowed)
            }
        }
        return acceptance
    }
}
