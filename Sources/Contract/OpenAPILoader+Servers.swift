/// A Server Object's URL (OpenAPI 3.0.3 §4.7.5), for the path a document's operations start at.
extension OpenAPILoader {
    /// A Server Object's URL with each `{variable}` replaced by its `default` (OpenAPI 3.0.3
    /// §4.7.5: the value used for substitution), or without one its first `enum` value; one with
    /// neither stays as written.
    static func url(ofServer server: Value) -> String? {
        guard let url = server["url"]?.string else { return nil }
        guard case .object(let variables)? = server["variables"] else { return url }
        var substituted = ""
        var rest = url[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            substituted += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            let variable = variables.first { $0.0 == name }?.1
            let value = variable?["default"]?.string ?? variable?["enum"]?.items?.first?.string
            substituted += value ?? String(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return substituted + rest
    }

    /// Every URL a Server Object names: its variables at their defaults first, then at each
    /// value of their `enum` (OpenAPI 3.0.3 §4.7.6: the values the variable takes), as Prism and
    /// openapi-core match them; at most ``variantLimit``.
    static func urls(ofServer server: Value) -> [String] {
        guard let first = url(ofServer: server) else { return [] }
        guard case .object(let variables)? = server["variables"], let url = server["url"]?.string else {
            return [first]
        }
        var found = [first]
        var partial = [""]
        var rest = url[...]
        // Only the path's variables make more base paths: the host's stay at their defaults.
        let pathStart: String.Index
        if let scheme = url.firstIndex(of: ":"), url[scheme...].hasPrefix("://") {
            let authority = url.index(scheme, offsetBy: 3)
            pathStart = url[authority...].firstIndex(of: "/") ?? url.endIndex
        } else {
            pathStart = url.startIndex
        }
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let literal = String(rest[..<open])
            let name = String(rest[rest.index(after: open)..<close])
            let variable = variables.first { $0.0 == name }?.1
            var values = (variable?["default"]?.string ?? variable?["enum"]?.items?.first?.string).map { [$0] } ?? []
            for value in open >= pathStart ? variable?["enum"]?.items ?? [] : [] {
                if let text = value.string, !values.contains(text) { values.append(text) }
            }
            if values.isEmpty { values = [String(rest[open...close])] }
            partial = partial.flatMap { prefix in values.map { prefix + literal + $0 } }
            if partial.count > variantLimit { partial = Array(partial.prefix(variantLimit)) }
            rest = rest[rest.index(after: close)...]
        }
        for text in partial.map({ $0 + rest }) where !found.contains(text) { found.append(text) }
        return found
    }

    /// The most URLs one Server Object's variables make.
    static let variantLimit = 64

    /// The distinct base paths of a `servers` list (`""` for the root), in order; `nil` when
    /// there is no list or no server in it has a URL.
    static func basePaths(of servers: Value?) -> [String]? {
        guard let items = servers?.items else { return nil }
        var bases: [String] = []
        for server in items {
            for url in urls(ofServer: server) {
                let base = path(ofServer: url)
                if !bases.contains(base) { bases.append(base) }
            }
        }
        return bases.isEmpty ? nil : bases
    }

    /// The path of a server URL (`https://api.example.com/v2` → `/v2`).

    static func path(ofServer url: String) -> String {
        let parsed = URIReference(url)
        var path = parsed.path
        while path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// A variable without a default (OpenAPI requires one) stays as written in the base path:
    /// said, with what to do.
    static func literalVariableWarning(
        _ base: String, in document: SourceDocument, at pointer: String = "/servers/0/url"
    ) -> ContractError? {
        guard base.contains("{") else { return nil }
        return ContractError(
            file: document.uri, line: document.line(of: pointer), pointer: pointer,
            message:
                "the base path \(base) keeps a variable without a default: requests match it literally; set the rule's contract.base_path"
        )
    }
}
