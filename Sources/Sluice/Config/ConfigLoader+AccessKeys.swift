/// The `proxy_auth.*` keys of ``ConfigLoader/keys``: who may use a proxy other devices reach.
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
    ]
}
