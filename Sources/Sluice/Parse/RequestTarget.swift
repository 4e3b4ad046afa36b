/// A request target (RFC 9112 §3.2) as a forward proxy sees it.
public enum RequestTarget: Sendable, Equatable {
    /// `GET http://host:port/path?query` — what proxies receive.
    case absolute(TargetURL)
    /// `CONNECT host:port`.
    case authority(host: String, port: UInt16)
    /// `GET /path` — meant for an origin server, not a proxy.
    case origin(String)
    /// `OPTIONS *`.
    case asterisk
}

/// An absolute `http` or `https` URL split into the parts a proxy needs.
public struct TargetURL: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`, lower case.
    public var scheme: String
    /// The host, lower case; IPv6 literals keep their brackets.
    public var host: String
    /// The port, explicit or the scheme's default.
    public var port: UInt16
    /// Path and query, at least `/`; never a fragment.
    public var pathAndQuery: String

    /// Whether `port` is the scheme's default.
    public var hasDefaultPort: Bool { port == TargetURL.defaultPort(scheme) }

    /// `host` or `host:port` as it belongs in a `Host` field.
    public var authority: String { hasDefaultPort ? host : "\(host):\(port)" }

    /// The normalised URL text: lower-case scheme and host, default port omitted.
    public var description: String { "\(scheme)://\(authority)\(pathAndQuery)" }

    /// The origin (scheme, host, port) for same-origin comparisons.
    public var origin: String { "\(scheme)://\(host):\(port)" }

    /// 80 for `http`, 443 for `https`.
    public static func defaultPort(_ scheme: String) -> UInt16 { scheme == "https" ? 443 : 80 }

    /// A URL from parts.
    public init(scheme: String, host: String, port: UInt16, pathAndQuery: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
    }

    /// Parses an absolute `http`/`https` URL; `nil` for anything else (userinfo, bad port, no host,
    /// spaces, control characters or non-ASCII bytes).
    public init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        let afterSlashes = rest.dropFirst(2)
        let authorityEnd = afterSlashes.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterSlashes.endIndex
        let authority = afterSlashes[..<authorityEnd]
        guard let (host, port) = TargetURL.splitAuthority(authority, defaultPort: TargetURL.defaultPort(scheme))
        else { return nil }
        var path = String(afterSlashes[authorityEnd...])
        if let hash = path.firstIndex(of: "#") { path = String(path[..<hash]) }
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        self.init(scheme: scheme, host: host, port: port, pathAndQuery: path)
    }

    /// Splits `host[:port]` (IPv6 in brackets); rejects userinfo, empty hosts and bad ports.
    static func splitAuthority(_ authority: Substring, defaultPort: UInt16?) -> (String, UInt16)? {
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard host.count > 2,
                host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." })
            else { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        let hostOK = host.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: ":")
        }
        guard hostOK else { return nil }
        var port: UInt16
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
                let value = UInt16(portText), value > 0
            else { return nil }
            port = value
        } else {
            guard let defaultPort else { return nil }
            port = defaultPort
        }
        return (host.lowercased(), port)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
