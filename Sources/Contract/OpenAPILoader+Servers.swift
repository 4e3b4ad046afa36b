/// A Server Object's URL (OpenAPI 3.0.3 §4.7.5), for the path a document's operations start at.
extension OpenAPILoader {
    /// A Server Object's URL with each `{variable}` replaced by its `default` (OpenAPI 3.0.3
    /// §4.7.5: the value used for substitution); one without a default stays as written.
    static func url(ofServer server: Value) -> String? {
        guard let url = server["url"]?.string else { return nil }
        guard case .object(let variables)? = server["variables"] else { return url }
        var substituted = ""
        var rest = url[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            substituted += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            let value = variables.first { $0.0 == name }?.1["default"]?.string
            substituted += value ?? String(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return substituted + rest
    }

    /// The path of a server URL (`https://api.example.com/v2` → `/v2`).
    /// The distinct base paths of a `servers` list (`""` for the root), in order; `nil` when
    /// there is no list or no server in it has a URL.
    static func basePaths(of servers: Value?) -> [String]? {
        guard let items = servers?.items else { return nil }
        var bases: [String] = []
        for server in items {
            guard let url = url(ofServer: server) else { continue }
            let base = path(ofServer: url)
            if !bases.contains(base) { bases.append(base) }
        }
        return bases.isEmpty ? nil : bases
    }

    static func path(ofServer url: String) -> String {
        let parsed = URIReference(url)
        var path = parsed.path
        while path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// A variable without a default (OpenAPI requires one) stays as written in the base path:
    /// said, with what to do.
    static func literalVariableWarning(_ base: String, in document: SourceDocument) -> ContractError? {
        guard base.contains("{") else { return nil }
        return ContractError(
            file: document.uri, line: document.line(of: "/servers/0/url"), pointer: "/servers/0/url",
            message:
                "the base path \(base) keeps a server variable without a default: requests match it literally; set the rule's contract.base_path"
        )
    }
}
