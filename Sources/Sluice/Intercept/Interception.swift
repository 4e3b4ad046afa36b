/// Requests inside a CONNECT tunnel Sluice serves (intercepted TLS: `https`; plain HTTP sent
/// through it: `http`): origin-form targets take their scheme and authority from the CONNECT; a
/// request for another authority is a `421 Misdirected Request` (RFC 9110 §15.5.20), never
/// forwarded elsewhere.
enum Interception {
    /// The absolute target of a request received inside the tunnel to `authority`.
    static func target(of request: ProxyRequest, authority: ClientConnection.Authority, scheme: String = "https")
        -> Result<RequestTarget, SluiceError>
    {
        let host = authority.host.lowercased()
        let defaultPort: UInt16 = scheme == "https" ? 443 : 80
        let expected = authority.port == defaultPort ? host : "\(host):\(authority.port)"
        func misdirected(_ named: String) -> Result<RequestTarget, SluiceError> {
            .failure(
                .badRequest(
                    reason: .misdirected(
                        "This connection was opened for \(expected); a request for \(named) must use a connection of its own."
                    )))
        }
        switch request.target {
        case .origin(let path):
            if let field = request.headers[.host], !names(field, host: host, port: authority.port) {
                return misdirected(field)
            }
            return .success(.absolute(TargetURL(scheme: scheme, host: host, port: authority.port, pathAndQuery: path)))
        case .absolute(let url):
            guard url.scheme == scheme, url.host == host, url.port == authority.port else {
                return misdirected(url.description)
            }
            return .success(.absolute(url))
        case .asterisk:
            var url = TargetURL(scheme: scheme, host: host, port: authority.port, pathAndQuery: "/")
            url.hasEmptyPath = true
            return .success(.absolute(url))
        case .authority(let other, let port):
            return .failure(
                .badRequest(
                    reason: .malformed("CONNECT \(other):\(port) inside a CONNECT tunnel is not supported")))
        }
    }

    /// Whether a `Host` field value names `host:port`, or `host` without a port.
    static func names(_ field: String, host: String, port: UInt16) -> Bool {
        let value = field.trimmingOWS().lowercased()
        var name = value
        if let colon = value.lastIndex(of: ":"), !value.hasSuffix("]") {
            guard let number = UInt16(value[value.index(after: colon)...]) else { return false }
            name = String(value[..<colon])
            return name == host && number == port
        }
        // No port: the CONNECT's says where the connection goes (clients that tunnel a request
        // often write the bare host).
        return name == host
    }
}
