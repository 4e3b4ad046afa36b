/// Requests inside a CONNECT tunnel Sluice serves (intercepted TLS: `https`; plain HTTP sent
/// through it: `http`): origin-form targets take their scheme and authority from the CONNECT; a
/// request for another authority is a `421 Misdirected Request` (RFC 9110 §15.5.20), never
/// forwarded elsewhere.
enum Interception {
    /// Gives a refused request with an origin-form target this connection's absolute URL, so
    /// that its problem's `url` and its log line name a URL as every other one does.
    static func nameOnConnection(
        _ request: inout ProxyRequest, authority: ClientConnection.Authority, scheme: String = "https"
    ) {
        guard case .origin(let path) = request.target else { return }
        request.target = .absolute(
            TargetURL(
                scheme: scheme, host: authority.host.lowercasedUnlessPlain(), port: authority.port, pathAndQuery: path))
    }

    /// The absolute target of a request received inside the tunnel to `authority`.
    static func target(of request: ProxyRequest, authority: ClientConnection.Authority, scheme: String = "https")
        -> Result<RequestTarget, SluiceError>
    {
        let host = authority.host.lowercasedUnlessPlain()
        func misdirected(_ named: String) -> Result<RequestTarget, SluiceError> {
            let defaultPort: UInt16 = scheme == "https" ? 443 : 80
            let expected = authority.port == defaultPort ? host : "\(host):\(authority.port)"
            return .failure(
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

    /// Whether a `Host` field value names `host:port`, or `host` without a port (`host` in lower
    /// case; the field's name is compared without regard to ASCII case, its port as digits only).
    static func names(_ field: String, host: String, port: UInt16) -> Bool {
        var field = field
        let ascii = field.withUTF8 { !$0.contains(where: { $0 >= 0x80 }) }
        // Beyond ASCII (a host not in its ASCII form): compared as text, in lower case.
        guard ascii else { return namesAsText(field, host: host, port: port) }
        return field.withUTF8 { value in
            var start = 0
            var end = value.count
            while start < end, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
            while end > start, value[end - 1] == 0x20 || value[end - 1] == 0x09 { end -= 1 }
            var nameEnd = end
            if end > start, value[end - 1] != UInt8(ascii: "]"),
                let colon = value[start..<end].lastIndex(of: UInt8(ascii: ":"))
            {
                // A port: one or more digits, no sign, within 16 bits.
                guard colon + 1 < end else { return false }
                var number = 0
                for byte in value[(colon + 1)..<end] {
                    guard byte >= 0x30, byte <= 0x39 else { return false }
                    number = number * 10 + Int(byte - 0x30)
                    guard number <= Int(UInt16.max) else { return false }
                }
                guard number == Int(port) else { return false }
                nameEnd = colon
            }
            // No port: the CONNECT's says where the connection goes (clients that tunnel a request
            // often write the bare host).
            var host = host
            return host.withUTF8 { expected in
                guard expected.count == nameEnd - start else { return false }
                for offset in 0..<expected.count {
                    var byte = value[start + offset]
                    if byte >= 0x41, byte <= 0x5A { byte |= 0x20 }
                    guard byte == expected[offset] else { return false }
                }
                return true
            }
        }
    }
}

extension Interception {
    /// ``names(_:host:port:)`` for a value with bytes beyond ASCII, by Unicode lower case.
    private static func namesAsText(_ field: String, host: String, port: UInt16) -> Bool {
        let value = field.trimmingOWS().lowercased()
        if let colon = value.lastIndex(of: ":"), !value.hasSuffix("]") {
            let digits = value[value.index(after: colon)...]
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = UInt16(digits)
            else { return false }
            return String(value[..<colon]) == host && number == port
        }
        return value == host
    }
}

extension String {
    /// The string in lower case; itself, without a copy, when it is ASCII with no capital letter
    /// (the common case for host names).
    func lowercasedUnlessPlain() -> String {
        var copy = self
        let plain = copy.withUTF8 { bytes in !bytes.contains(where: { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 }) }
        return plain ? self : lowercased()
    }
}
