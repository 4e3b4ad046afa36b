import EventIO

/// A parent (upstream) proxy that requests go through instead of straight to their origins
/// (Squid's `cache_peer … parent`, mitmproxy's upstream mode): `http://`, `https://` or
/// `socks5h://` (the parent resolves names), with optional credentials. The credentials never
/// appear in ``description`` (what logs, problems, `check-config` and `/stats` show).
public struct ParentProxy: Sendable, Equatable, CustomStringConvertible {
    public enum Scheme: String, Sendable, CaseIterable {
        case http, https, socks5h
        var defaultPort: UInt16 {
            switch self {
            case .http: 3128
            case .https: 443
            case .socks5h: 1080
            }
        }
    }

    public let scheme: Scheme
    /// The host as written (a name, an IPv4 literal, or an IPv6 literal without brackets).
    public let host: String
    public let port: UInt16
    /// Credentials, percent-decoded.
    let username: String?
    let password: String?
    /// PEM CA certificates its TLS certificate is checked against (an `https://` parent), set by
    /// the routing that chose it; `nil` = the system store.
    var caFile: String?

    /// `scheme://host:port`, never the credentials.
    public var description: String {
        "\(scheme.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
            + (username != nil ? " (with credentials)" : "")
    }

    /// The URL for libcurl's `CURLOPT_PROXY`, credentials included (never logged).
    var curlURL: String {
        var userinfo = ""
        if let username {
            userinfo = Self.percentEncoded(username) + (password.map { ":" + Self.percentEncoded($0) } ?? "") + "@"
        }
        return "\(scheme.rawValue)://\(userinfo)\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// `Proxy-Authorization` for a CONNECT Sluice sends itself.
    var basicAuthorization: String? {
        guard let username else { return nil }
        return "Basic " + Self.base64(Array((username + ":" + (password ?? "")).utf8))
    }

    /// Parses `scheme://[user[:password]@]host[:port][/]`; the error says what is wrong.
    public static func parse(_ text: String) -> Result<ParentProxy, ParseError> {
        let parts = text.trimmingOWS().split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .failure(.init("expected scheme://host:port")) }
        guard let scheme = Scheme(rawValue: parts[0].lowercased()) else {
            return .failure(.init("the scheme must be http, https or socks5h"))
        }
        var rest = parts[1]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            return .failure(.init("a parent proxy has no path"))
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userinfo.firstIndex(of: ":") {
                username = PercentEncoding.decode(userinfo[..<colon], plusAsSpace: false)
                password = PercentEncoding.decode(userinfo[userinfo.index(after: colon)...], plusAsSpace: false)
            } else {
                username = PercentEncoding.decode(userinfo, plusAsSpace: false)
            }
            guard username?.isEmpty == false else { return .failure(.init("empty user name")) }
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return .failure(.init("unclosed [ in the host")) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                return .failure(.init("unexpected text after the host"))
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.init("missing or invalid host"))
        }
        var port = scheme.defaultPort
        if let portText {
            guard let number = UInt16(portText), number > 0 else { return .failure(.init("the port must be 1-65535")) }
            port = number
        }
        return .success(
            ParentProxy(scheme: scheme, host: host.lowercased(), port: port, username: username, password: password))
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func percentEncoded(_ text: String) -> String {
        PercentEncoding.encoded(text, keeping: PercentEncoding.isUnreserved)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Whether a request goes through a parent, and which: `upstream.proxy` (a URL, or `env`:
/// `HTTP_PROXY`/`HTTPS_PROXY` read at start), minus `upstream.no_proxy` (host globs and CIDRs),
/// overridden per rule (`proxy: URL | none`). Pure.
public struct ParentRouting: Sendable, Equatable {
    /// The parent for `http://` targets, and for `https://` ones (the same unless taken from the
    /// environment, where `HTTP_PROXY` and `HTTPS_PROXY` may differ).
    public var forHTTP: ParentProxy?
    public var forHTTPS: ParentProxy?
    /// Targets that always go direct.
    public var exceptions: [Exception] = []
    /// `upstream.proxy_ca_file`: what `https://` parents' certificates are checked against
    /// (`nil`: the system store).
    public var caFile: String?

    public enum Exception: Sendable, Equatable {
        case host(Glob)
        case network(CIDR)
        /// `*`: every target (NO_PROXY=*).
        case all
    }

    public init(
        forHTTP: ParentProxy? = nil, forHTTPS: ParentProxy? = nil, exceptions: [Exception] = [], caFile: String? = nil
    ) {
        self.forHTTP = forHTTP
        self.forHTTPS = forHTTPS
        self.exceptions = exceptions
        self.caFile = caFile
    }

    /// A rule's own choice.
    public enum RuleChoice: Sendable, Equatable {
        case parent(ParentProxy)
        /// `proxy: none`: straight to the origin.
        case direct
    }

    /// The parent for a target (`https`: the origin is reached over TLS or a tunnel), with the
    /// trust its certificate is checked against.
    func parent(host: String, https: Bool, rule: RuleChoice?) -> ParentProxy? {
        chosen(host: host, https: https, rule: rule).map {
            var parent = $0
            parent.caFile = caFile
            return parent
        }
    }

    private func chosen(host: String, https: Bool, rule: RuleChoice?) -> ParentProxy? {
        switch rule {
        case .direct?: return nil
        case .parent(let parent)?: return parent
        case nil: break
        }
        guard let parent = https ? forHTTPS : forHTTP else { return nil }
        let name = host.lowercased()
        let literal = SocketAddress.parseIP(name.withoutIPv6Brackets)
        for exception in exceptions {
            switch exception {
            case .all: return nil
            case .host(let glob): if glob.matches(name) { return nil }
            case .network(let cidr): if let literal, cidr.contains(literal) { return nil }
            }
        }
        return parent
    }

    /// Parses one `no_proxy` member: `*`, a CIDR or IP literal, `.example.com` / `example.com`
    /// (the domain and its subdomains, as curl and most tools read NO_PROXY), or a host glob.
    static func exceptions(_ text: String) -> [Exception]? {
        let item = text.trimmingOWS().lowercased()
        if item == "*" { return [.all] }
        if let cidr = CIDR(item) { return [.network(cidr)] }
        if let ip = SocketAddress.parseIP(item), let cidr = CIDR("\(item)/\(ip.count == 4 ? 32 : 128)") {
            return [.network(cidr)]
        }
        var domain = item
        if domain.hasPrefix(".") { domain.removeFirst() }
        if !domain.contains("*") {
            // The domain itself and every subdomain.
            guard case .success(let exact) = Glob.parse(domain, kind: .host),
                case .success(let below) = Glob.parse("*." + domain, kind: .host)
            else { return nil }
            return [.host(exact), .host(below)]
        }
        guard case .success(let glob) = Glob.parse(domain, kind: .host) else { return nil }
        return [.host(glob)]
    }
}
