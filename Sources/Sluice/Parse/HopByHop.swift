/// The connection-specific fields a proxy never forwards (RFC 9110 §7.6.1, RFC 9112 §9.6).
enum HopByHop {
    /// Names listed in `Connection` that may be removed; framing and routing fields are never
    /// removed on a peer's say-so (`Connection: Host` must not strip the Host).
    static let protected: Set<String> = ["host", "content-length", "transfer-encoding"]

    /// Whether `field` is always connection-specific, in both directions: Connection, Keep-Alive,
    /// Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade, Proxy-Authorization, Proxy-Authenticate.
    static func isHopByHop(_ field: HTTPFields.Field) -> Bool {
        bits & field.code.bit != 0
    }

    /// The codes of those fields, as ``FieldCode/bit``s.
    static let bits: UInt64 = [
        FieldCode.te, .trailer, .upgrade, .connection, .keepAlive, .proxyConnection, .transferEncoding,
        .proxyAuthenticate, .proxyAuthorization,
    ].reduce(0) { $0 | $1.bit }

    /// Removes hop-by-hop fields and those named in `Connection`.
    static func strip(_ fields: inout HTTPFields) {
        let named = named(in: fields)
        fields.remove(codes: bits)
        if !named.isEmpty { fields.removeAll { field in named.contains(where: field.hasName) } }
    }

    /// The other fields that `Connection` names (lower case), to be removed with it.
    static func named(in fields: HTTPFields) -> [String] {
        var named: [String] = []
        guard fields.contains(.connection) else { return named }
        let lines = fields.fields
        for index in lines.indices where lines[index].code == .connection {
            // The usual values name no other field (compared in place: no lower-case copy).
            if HTTPFields.Field.equalIgnoringCase(lines[index].value, "keep-alive")
                || HTTPFields.Field.equalIgnoringCase(lines[index].value, "close")
            {
                continue
            }
            let value = lines[index].value.lowercased()
            for token in value.split(separator: ",") {
                let name = token.trimmingOWS()
                if !name.isEmpty, name != "keep-alive", name != "close", !protected.contains(name) {
                    named.append(name)
                }
            }
        }
        return named
    }
}
