/// A rule's `respond:` block (map local): the answer a matching request gets from Sluice itself;
/// nothing goes upstream and nothing is cached.
public struct MapLocal: Sendable, Equatable {
    /// Where the body comes from.
    public enum Body: Sendable, Equatable {
        /// The text given in the configuration.
        case text(String)
        /// A file, read when a request comes (so edits show without a reload); an absolute path
        /// once the configuration is anchored to its file's directory.
        case file(String)
    }

    /// The status code (200 by default; 1xx is refused by the configuration).
    public var status = 200
    /// Header fields of the answer, in order; `Content-Length`, `Date` and `Via` are Sluice's.
    public var headers = HTTPFields()
    /// The body; empty text by default.
    public var body = Body.text("")

    public init() {}

    /// Statuses that never carry a body (RFC 9110 §15.3.5, §15.4.5).
    static func isBodiless(_ status: Int) -> Bool { status == 204 || status == 304 }

    /// A media type for a file by its extension, when the rule names none.
    static func mediaType(forFile path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        switch name[name.index(after: dot)...].lowercased() {
        case "json": return "application/json"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt", "text": return "text/plain; charset=utf-8"
        case "xml": return "application/xml"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "csv": return "text/csv; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "pdf": return "application/pdf"
        case "wasm": return "application/wasm"
        default: return "application/octet-stream"
        }
    }
}

/// A rule's `upstream:` (map remote): matching requests are sent to another origin, with the
/// request's path and query appended to the mapping's own path.
public struct MapRemote: Sendable, Equatable {
    /// The origin (and path prefix) requests go to instead.
    public var target: TargetURL
    /// Whether the `Host` field keeps the client's value (`host: keep`) instead of naming the new
    /// origin (`host: rewrite`, the default, as Charles's Map Remote does).
    public var keepsHost = false

    public init(target: TargetURL, keepsHost: Bool = false) {
        self.target = target
        self.keepsHost = keepsHost
    }

    /// The URL a request for `url` goes to: the mapping's scheme, host and port; its path (without
    /// a trailing slash) before the request's path and query.
    func map(_ url: TargetURL) -> TargetURL {
        var mapped = target
        let prefix = target.hasEmptyPath || target.pathAndQuery == "/" ? "" : target.pathAndQuery
        let trimmed = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        mapped.pathAndQuery = trimmed + url.pathAndQuery
        mapped.hasEmptyPath = trimmed.isEmpty && url.hasEmptyPath
        return mapped
    }

    /// How the mapping is named in logs and records.
    var label: String { target.description }
}

/// Header fields changed on the way: `set` replaces every line of a name with one, `add` appends a
/// line, `remove` drops every line of a name (applied in the order remove, set, add).
public struct HeaderRewrite: Sendable, Equatable {
    /// `set:` one line per name, replacing the name's lines.
    public var replacing = HTTPFields()
    /// `add:` lines appended.
    public var adding = HTTPFields()
    /// `remove:` names, as written.
    public var removing: [String] = []

    public init() {}

    /// Whether it changes nothing.
    public var isEmpty: Bool { replacing.count == 0 && adding.count == 0 && removing.isEmpty }

    /// Fields no rewrite may touch: the message's framing and the connection's own fields are
    /// Sluice's to write (a rewritten `Content-Length` would desynchronise the connection).
    static func isReserved(_ name: String) -> Bool {
        let field = HTTPFields.Field(name: name, value: "")
        return field.hasName("content-length") || HopByHop.isHopByHop(field)
    }

    func apply(to fields: inout HTTPFields) {
        for name in removing { fields.remove(name) }
        for field in replacing { fields.set(field.name, field.value) }
        for field in adding { fields.append(name: field.name, value: field.value) }
    }
}

/// A rule's `rewrite:` block: the request's fields on the way up, the response's on the way back
/// (before validation and the cache: what is stored is what clients are shown).
public struct Rewrite: Sendable, Equatable {
    public var request = HeaderRewrite()
    public var response = HeaderRewrite()
    /// `response.json_patch`: RFC 6902 operations on JSON response bodies, applied at delivery
    /// (held and bounded like null stripping; the cache keeps the origin's bytes).
    public var responsePatch: JSONPatch?

    public init() {}
}
