/// The connection-specific fields a proxy never forwards (RFC 9110 §7.6.1, RFC 9112 §9.6).
enum HopByHop {
    /// Always connection-specific, in both directions.
    static let fields: [String] = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authorization", "proxy-authenticate",
    ]

    /// Names listed in `Connection` that may be removed; framing and routing fields are never
    /// removed on a peer's say-so (`Connection: Host` must not strip the Host).
    static let protected: Set<String> = ["host", "content-length", "transfer-encoding", "content-type"]

    /// Removes hop-by-hop fields and those named in `Connection`.
    static func strip(_ fields: inout HTTPFields) {
        var remove = HopByHop.fields
        if fields.contains("connection") {
            for token in fields.tokens("connection") where !protected.contains(token) { remove.append(token) }
        }
        fields.remove(keys: remove)
    }
}
