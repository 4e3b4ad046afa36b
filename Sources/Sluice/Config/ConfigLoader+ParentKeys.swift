/// The `upstream.proxy` and `upstream.no_proxy` keys of ``ConfigLoader/keys`` (docs/forwarding.md "Behind a
/// corporate proxy").
extension ConfigLoader {
    static let parentKeys: [Key] = [
        Key(
            path: "upstream.proxy", type: "URL | env | none", defaultValue: "none",
            summary:
                "A parent proxy for every request (http://, https:// or socks5h://host:port, credentials in the URL or from ${VAR}); env: HTTP_PROXY/HTTPS_PROXY/NO_PROXY, read at start."
        ) {
            config, value throws(ConfigError) in
            let text = try substitutingEnvironment(try value.string(), at: value)
            switch text {
            case "", "none": config.upstream.proxy = .none
            case "env": config.upstream.proxy = .environment
            default:
                switch ParentProxy.parse(text) {
                case .success(let parent): config.upstream.proxy = .url(parent)
                case .failure(let error): throw value.fail("\(error) (or env, or none)")
                }
            }
        },
        Key(
            path: "upstream.no_proxy", type: "list of host, .domain, glob, IP or CIDR", defaultValue: "[]",
            summary: "Targets that never go through the parent (`*` for all); a domain covers its subdomains."
        ) {
            config, value throws(ConfigError) in
            var exceptions: [ParentRouting.Exception] = []
            for item in try value.list() {
                let text = try item.string()
                guard let parsed = ParentRouting.exceptions(text) else {
                    throw item.fail("not a host, domain, glob, IP or CIDR: \(text)")
                }
                exceptions += parsed
            }
            config.upstream.noProxy = exceptions
        },
        Key(
            path: "upstream.proxy_ca_file", type: "path", defaultValue: "system store",
            summary:
                "PEM CA certificates an https:// parent's certificate is checked against, instead of the system store."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard !text.isEmpty else { throw value.fail("an empty path") }
            config.upstream.proxyCAFile = text
        },
    ]
}
