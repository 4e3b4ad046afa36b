import EventIO
import Redis
import Yams

/// The `cache.*` and `admin.*` keys of ``ConfigLoader/keys``.
extension ConfigLoader {
    static let cacheKeys: [Key] = [
        Key(
            path: "cache.shared", type: "mapping | none", defaultValue: "none",
            summary:
                "A second tier on Redis shared by several instances: { url: redis://[[user]:password@]host:port/db, prefix: \"sluice:\", max_entry: 4MiB, timeout: 50ms, cluster: false }."
        ) {
            config, value throws(ConfigError) in config.cache.sharedTier = try sharedTier(value)
        },
        Key(path: "cache.enabled", type: "bool", defaultValue: "true", summary: "Store and serve cacheable responses.")
        {
            config, value throws(ConfigError) in config.cache.enabled = try value.bool()
        },
        Key(
            path: "cache.path", type: "path", defaultValue: "sluice.sqlite",
            summary:
                "The SQLite cache file; relative to the configuration file's directory, and without one in the data directory (`sluice paths`)."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard !text.isEmpty else { throw value.fail("expected a file path") }
            config.cache.path = text
        },
        Key(
            path: "cache.capacity", type: "size", defaultValue: "1GiB",
            summary: "Most bytes of stored bodies; least recently used entries are evicted beyond it."
        ) {
            config, value throws(ConfigError) in config.cache.capacity = try value.byteSize()
        },
        Key(
            path: "cache.max_entry_size", type: "size", defaultValue: "0",
            summary: "Largest stored response; 0 = 5 % of the capacity."
        ) {
            config, value throws(ConfigError) in config.cache.maxEntrySize = try value.byteSize()
        },
        Key(
            path: "cache.max_variants", type: "integer", defaultValue: "16",
            summary:
                "Most responses kept per URL that vary (Vary: Accept-Language, User-Agent…); storing one more drops the least recently used."
        ) {
            config, value throws(ConfigError) in config.cache.maxVariants = try value.integer(in: 1...10_000)
        },
        Key(
            path: "cache.memory", type: "size", defaultValue: "8MiB",
            summary:
                "Memory for recently used entries and whole small bodies (hits without a query); 0 = every hit reads the file."
        ) {
            config, value throws(ConfigError) in config.cache.memory = try value.byteSize()
        },
        Key(
            path: "cache.mode", type: "shared | private", defaultValue: "shared",
            summary:
                "shared: never stores `private` or Authorization responses (RFC 9111 §3), nor Set-Cookie ones unless store_set_cookie; private: one user."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard let mode = Configuration.Cache.Mode(rawValue: text) else {
                throw value.fail("expected shared or private, not \(text)")
            }
            config.cache.mode = mode
        },
        Key(
            path: "cache.store_set_cookie", type: "bool", defaultValue: "false in shared mode, true in private",
            summary:
                "Store responses that set cookies, keeping their Set-Cookie lines (every client served from the entry receives them)."
        ) {
            config, value throws(ConfigError) in config.cache.storeSetCookie = try value.bool()
        },
        Key(
            path: "cache.heuristic_percent", type: "integer", defaultValue: "10",
            summary: "Heuristic freshness: this percent of Date − Last-Modified (RFC 9111 §4.2.2)."
        ) {
            config, value throws(ConfigError) in config.cache.heuristicPercent = try value.integer(in: 0...100)
        },
        Key(
            path: "cache.heuristic_max", type: "duration", defaultValue: "24h",
            summary: "Cap of heuristic freshness."
        ) {
            config, value throws(ConfigError) in config.cache.heuristicMax = try value.milliseconds()
        },
        Key(
            path: "cache.serve_stale_on_error", type: "duration", defaultValue: "0",
            summary:
                "Serve a stored response up to this long past its freshness when the origin fails (5xx, no connection, timeout) and it has no `stale-if-error` of its own; 0 = never."
        ) {
            config, value throws(ConfigError) in config.cache.serveStaleOnError = try value.milliseconds()
        },
        Key(
            path: "cache.collapse_forwarding", type: "bool", defaultValue: "true",
            summary:
                "Concurrent misses on a URL make one upstream request; the others wait for it and are served from what it stores."
        ) {
            config, value throws(ConfigError) in config.cache.collapseForwarding = try value.bool()
        },
        Key(
            path: "cache.collapse_timeout", type: "duration", defaultValue: "5s",
            summary:
                "Longest wait for another client's fetch of the same URL (a fetch held up by a slow client); then the waiter fetches for itself."
        ) {
            config, value throws(ConfigError) in config.cache.collapseTimeout = try value.milliseconds()
        },
        Key(
            path: "cache.uncacheable_ttl", type: "duration", defaultValue: "120s",
            summary:
                "A URL whose response could not be stored or shared is remembered this long: its misses go upstream in parallel instead of waiting for each other (Varnish's hit-for-miss)."
        ) {
            config, value throws(ConfigError) in config.cache.uncacheableTTL = try value.milliseconds()
        },
    ]

    static let adminKeys: [Key] = [
        Key(
            path: "admin.listen", type: "host:port", defaultValue: "127.0.0.1:8081",
            summary: "The admin API's port (stats, metrics, cache, events, health): loopback only; \"\" = none."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard !text.isEmpty else {
                config.admin.listen = ""
                return
            }
            guard Configuration.socketAddress(text)?.isLoopback == true else {
                throw value.fail("expected a loopback address and port, like 127.0.0.1:8081")
            }
            config.admin.listen = text
        },
        Key(
            path: "admin.token", type: "string", defaultValue: "\"\"",
            summary: "When set, DELETE and POST on the admin API need `Authorization: Bearer <token>`."
        ) {
            config, value throws(ConfigError) in config.admin.token = try value.string()
        },
    ]
}

extension ConfigLoader {
    /// `cache.shared`: `none`, or a mapping of url, prefix, max_entry, timeout and cluster.
    static func sharedTier(_ value: Value) throws(ConfigError) -> Configuration.Cache.SharedTier? {
        if value.node.isNull { return nil }
        if let scalar = value.node.scalar {
            guard scalar.string == "none" || scalar.string.isEmpty else {
                throw value.fail("expected a mapping or none")
            }
            return nil
        }
        guard let mapping = value.node.mapping else { throw value.fail("expected a mapping or none") }
        var tier = Configuration.Cache.SharedTier()
        var sawURL = false
        for (keyNode, valueNode) in mapping {
            let name = keyNode.string ?? ""
            let item = Value(node: valueNode, path: value.path + "." + name)
            switch name {
            case "url":
                let text = try substitutingEnvironment(try item.string(), at: item)
                guard text.hasPrefix("redis://") else {
                    throw item.fail(
                        text.hasPrefix("rediss://")
                            ? "TLS to Redis (rediss://) is not supported: Debian's hiredis 0.14 has no TLS"
                            : "expected redis://[[user]:password@]host:port[/db]")
                }
                var rest = Substring(text.dropFirst(8))
                if let slash = rest.firstIndex(of: "/") {
                    let db = rest[rest.index(after: slash)...]
                    // `redis://host:6379/` names database 0, as redis-cli reads it.
                    guard let number = db.isEmpty ? 0 : Int(db), (0...15).contains(number) else {
                        throw item.fail("the database is 0-15 (redis://host:port/N)")
                    }
                    tier.database = number
                    rest = rest[..<slash]
                }
                if let at = rest.lastIndex(of: "@") {
                    // user:password@ (an ACL user), :password@ or password@ (requirepass).
                    let userinfo = rest[..<at]
                    rest = rest[rest.index(after: at)...]
                    let colon = userinfo.firstIndex(of: ":")
                    let user = colon.map { PercentEncoding.decode(userinfo[..<$0], plusAsSpace: false) }
                    let password = PercentEncoding.decode(
                        colon.map { userinfo[userinfo.index(after: $0)...] } ?? userinfo, plusAsSpace: false)
                    guard !password.isEmpty else { throw item.fail("an empty password") }
                    tier.credentials = .init(user: user?.isEmpty == true ? nil : user, password: password)
                }
                // An IPv6 address is written in brackets (RFC 3986 §3.2.2): `redis://[::1]:6379`.
                var host = rest
                var portText: Substring?
                if rest.hasPrefix("[") {
                    guard let close = rest.firstIndex(of: "]") else { throw item.fail("an IPv6 address without ]") }
                    host = rest[rest.index(after: rest.startIndex)..<close]
                    let after = rest[rest.index(after: close)...]
                    if !after.isEmpty {
                        guard after.hasPrefix(":") else { throw item.fail("expected :port after the IPv6 address") }
                        portText = after.dropFirst()
                    }
                } else if let colon = rest.lastIndex(of: ":") {
                    host = rest[..<colon]
                    portText = rest[rest.index(after: colon)...]
                }
                if let portText {
                    guard let port = UInt16(portText), port > 0 else { throw item.fail("the port must be 1-65535") }
                    tier.port = port
                }
                guard !host.isEmpty else { throw item.fail("missing host") }
                tier.host = String(host)
                sawURL = true
            case "prefix":
                tier.prefix = try item.string()
                // Purges find the tier's keys with SCAN MATCH prefix*: a glob character in it
                // (or no prefix at all) would take other applications' keys with them.
                guard !tier.prefix.isEmpty else {
                    throw item.fail("an empty prefix would let purges take every key of the database")
                }
                // (Braces too: a hash tag in it would put every entry of a Cluster in one slot.)
                if let special = tier.prefix.first(where: { "*?[]\\{}".contains($0) || $0.isWhitespace }) {
                    throw item.fail(
                        "\"\(special)\" in the prefix: purges match prefix* as a Redis glob; use letters, digits and : - _ . /"
                    )
                }
            case "max_entry": tier.maxEntry = try item.byteSize()
            case "timeout":
                tier.timeout = try item.milliseconds()
                guard tier.timeout > 0 else { throw item.fail("must be more than 0") }
            case "cluster": tier.cluster = try item.bool()
            default:
                throw item.fail("unknown key (url, prefix, max_entry, timeout, cluster)")
            }
        }
        guard sawURL else { throw value.fail("cache.shared needs url: redis://host:port") }
        if tier.cluster, tier.database != 0 { throw value.fail("a Redis Cluster has only database 0") }
        return tier
    }
}
