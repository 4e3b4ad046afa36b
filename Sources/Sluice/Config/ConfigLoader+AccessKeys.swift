/// The `proxy_auth.*`, `connect_ports` and `tunnel_plain_http` keys of ``ConfigLoader/keys``: who
/// may use a proxy other devices reach, and what CONNECT may do.
extension ConfigLoader {
    static let accessKeys: [Key] = [
        Key(
            path: "proxy_auth.user", type: "string", defaultValue: "none",
            summary:
                "Proxy authentication (Basic): the user every client must name (with proxy_auth.password_file)."
        ) {
            config, value throws(ConfigError) in
            let user = try value.string()
            guard !user.isEmpty, !user.contains(":") else { throw value.fail("a user name without ':'") }
            config.proxyAuth = Configuration.ProxyAuth(
                user: user, passwordFile: config.proxyAuth?.passwordFile ?? "")
        },
        Key(
            path: "proxy_auth.password_file", type: "path", defaultValue: "none",
            summary: "The file whose first line is the password (keep it mode 0600); never logged or served."
        ) {
            config, value throws(ConfigError) in
            let path = try value.string()
            guard !path.isEmpty else { throw value.fail("an empty path") }
            config.proxyAuth = Configuration.ProxyAuth(user: config.proxyAuth?.user ?? "", passwordFile: path)
        },
        Key(
            path: "connect_ports", type: "list of port", defaultValue: "[80, 443]",
            summary:
                "Ports CONNECT tunnels may reach (80: browsers tunnel ws:// there); others get `403 Port N not in connect_ports`."
        ) {
            config, value throws(ConfigError) in
            config.connectPorts = try value.list().map { item throws(ConfigError) in
                UInt16(try item.integer(in: 1...65535))
            }
        },
        Key(
            path: "tunnel_plain_http", type: "serve | relay", defaultValue: "serve",
            summary:
                "Plain HTTP a client sends inside a CONNECT tunnel (ws:// from browsers and WebSocket libraries): served like any request (rules, cache, contracts, messages on the page), or relayed blind."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard let choice = Configuration.TunnelPlainHTTP(rawValue: text) else {
                throw value.fail("expected serve or relay, not \(text)")
            }
            config.tunnelPlainHTTP = choice
        },
    ]
}
