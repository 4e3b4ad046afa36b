import EventIO
import Yams

/// Reads `conf/sluice.yaml` into a ``Configuration``.
///
/// The table ``keys`` is the one place that documents every key: its type, default and meaning.
/// The loader refuses unknown keys and wrong types, naming the key and its line.
public enum ConfigLoader {
    /// One documented configuration key and how it is applied.
    public struct Key: Sendable {
        /// Dotted path, e.g. `limits.max_connections`.
        public let path: String
        /// The value's type as users write it.
        public let type: String
        /// The default, as YAML.
        public let defaultValue: String
        /// What it does.
        public let summary: String
        let apply: @Sendable (inout Configuration, Value) throws(ConfigError) -> Void
    }

    /// A scalar or list from the file, with its line.
    public struct Value {
        let node: Node
        let path: String

        var line: Int? { node.mark?.line }

        func fail(_ message: String) -> ConfigError { ConfigError(key: path, line: line, message: message) }

        func string() throws(ConfigError) -> String {
            guard let scalar = node.scalar else { throw fail("expected a string") }
            return scalar.string
        }

        func bool() throws(ConfigError) -> Bool {
            guard let value = node.bool else { throw fail("expected true or false") }
            return value
        }

        func integer(in range: ClosedRange<Int>) throws(ConfigError) -> Int {
            guard let scalar = node.scalar, let value = Int(scalar.string), range.contains(value) else {
                throw fail("expected an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }

        /// `1048576`, `64KiB`, `100MiB`, `1GiB` (K, M, G are binary too).
        func byteSize() throws(ConfigError) -> Int64 {
            let text = try string().trimmingOWS()
            let units: [(String, Int64)] = [
                ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30),
                ("B", 1),
            ]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                guard let number = Int64(text.dropLast(suffix.count).trimmingOWS()), number >= 0 else { break }
                return number * factor
            }
            guard let number = Int64(text), number >= 0 else {
                throw fail("expected a size like 65536, 64KiB or 100MiB")
            }
            return number
        }

        /// Seconds as a number, or `500ms`, `10s`, `5m`, `1h`, `7d`; milliseconds out.
        func milliseconds() throws(ConfigError) -> Int {
            let text = try string().trimmingOWS()
            let units: [(String, Double)] = [
                ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
            ]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                if let number = Double(text.dropLast(suffix.count)), number >= 0 { return Int(number * factor) }
            }
            guard let seconds = Double(text), seconds >= 0 else { throw fail("expected a duration like 10s or 500ms") }
            return Int(seconds * 1000)
        }

        func list() throws(ConfigError) -> [Value] {
            guard let sequence = node.sequence else { throw fail("expected a list") }
            return sequence.map { Value(node: $0, path: path) }
        }

        /// A list of networks (`10.0.0.0/8`, `fe80::/10`, a bare address).
        func cidrList() throws(ConfigError) -> [CIDR] {
            try list().map { item throws(ConfigError) in
                guard let cidr = CIDR(try item.string()) else { throw item.fail("expected a CIDR like 10.0.0.0/8") }
                return cidr
            }
        }
    }

    /// Every key, its type, default and meaning.
    public static let keys: [Key] =
        [
            Key(
                path: "listen", type: "host:port", defaultValue: "127.0.0.1:8080",
                summary: "Address of the proxy port (loopback by default)."
            ) {
                config, value throws(ConfigError) in
                let text = try value.string()
                guard Configuration.socketAddress(text) != nil else {
                    throw value.fail("expected an IP address and port, like 127.0.0.1:8080")
                }
                config.listen = text
            },
            Key(
                path: "allow_clients", type: "list of CIDR", defaultValue: "[]",
                summary: "Client networks allowed besides loopback (no open proxy unless listed)."
            ) {
                config, value throws(ConfigError) in
                config.allowClients = try value.cidrList()
            },
        ] + accessKeys + [
            Key(
                path: "deny_targets", type: "list of CIDR",
                defaultValue: "[169.254.0.0/16, fe80::/10, 100.100.100.200/32, fd00:ec2::254/128, 0.0.0.0/8, ::/128]",
                summary: "Upstream networks never connected to (link-local, cloud metadata), checked after DNS."
            ) {
                config, value throws(ConfigError) in
                config.denyTargets = try value.cidrList()
            },
            Key(
                path: "loopback_targets", type: "local-clients | all | none", defaultValue: "local-clients",
                summary: "Who may reach 127.0.0.0/8 and ::1 through the proxy: clients on this machine, all, none."
            ) {
                config, value throws(ConfigError) in
                let text = try value.string()
                guard let choice = Configuration.LoopbackTargets(rawValue: text) else {
                    throw value.fail("expected local-clients, all or none")
                }
                config.loopbackTargets = choice
            },
            Key(
                path: "limits.max_connections", type: "integer", defaultValue: "1024",
                summary: "Concurrent client connections; more get 503."
            ) {
                config, value throws(ConfigError) in config.limits.maxConnections = try value.integer(in: 1...1_000_000)
            },
            Key(
                path: "limits.max_request_line", type: "size", defaultValue: "8KiB",
                summary: "Longest request line; longer gets 414."
            ) {
                config, value throws(ConfigError) in
                config.limits.maxRequestLine = Int(try value.byteSize())
            },
            Key(
                path: "limits.max_header_bytes", type: "size", defaultValue: "64KiB",
                summary:
                    "Largest request header section; larger gets 431. An origin's response header section over it gets the client a 502."
            ) {
                config, value throws(ConfigError) in
                config.limits.maxHeaderBytes = Int(try value.byteSize())
            },
            Key(
                path: "limits.max_request_body", type: "size", defaultValue: "100MiB",
                summary: "Largest request body; larger gets 413."
            ) {
                config, value throws(ConfigError) in config.limits.maxRequestBody = try value.byteSize()
            },
            Key(
                path: "limits.max_transform_body", type: "size", defaultValue: "16MiB",
                summary: "Largest (decoded) JSON body the null stripper buffers; larger ones pass untouched, marked."
            ) {
                config, value throws(ConfigError) in
                config.limits.maxTransformBody = Int(min(try value.byteSize(), Int64(Int32.max)))
            },
            Key(
                path: "limits.max_held_bodies", type: "size", defaultValue: "256MiB",
                summary:
                    "Body bytes all exchanges together hold whole (JSON transforms, enforced contracts, response breakpoints) until the client has taken them; past it, bodies pass untouched, marked."
            ) {
                config, value throws(ConfigError) in config.limits.maxHeldBodies = Int(try value.byteSize())
            },
        ] + timeoutKeys + [
            Key(
                path: "upstream.engine", type: "string", defaultValue: "auto",
                summary:
                    "Which transport carries upstream requests: auto (Sluice's own HTTP/1.1 where it applies: http:// and https:// origins without a parent proxy; libcurl for the rest: parents, HTTP/2-only origins, gRPC) or curl (libcurl for everything)."
            ) {
                config, value throws(ConfigError) in
                let text = try value.string()
                guard let engine = Configuration.UpstreamEngine(rawValue: text) else {
                    throw value.fail("expected auto or curl")
                }
                config.upstream.engine = engine
            },
            Key(
                path: "upstream.http2", type: "bool", defaultValue: "true",
                summary:
                    "Offer HTTP/2 to TLS origins (ALPN) when libcurl carries the request (upstream.engine: curl, a parent proxy, gRPC, an origin that speaks only HTTP/2)."
            ) {
                config, value throws(ConfigError) in config.upstream.http2 = try value.bool()
            },
            Key(
                path: "upstream.max_idle_connections", type: "integer", defaultValue: "256",
                summary: "Idle origin connections kept for reuse."
            ) {
                config, value throws(ConfigError) in
                config.upstream.maxIdleConnections = try value.integer(in: 0...100_000)
            },
            Key(
                path: "upstream.max_connections_per_host", type: "integer", defaultValue: "0",
                summary: "Connections per origin; 0 = unlimited."
            ) {
                config, value throws(ConfigError) in
                config.upstream.maxConnectionsPerHost = try value.integer(in: 0...100_000)
            },
            Key(
                path: "redirects.policy", type: "pass | follow | refuse", defaultValue: "pass",
                summary:
                    "pass: the client gets the 3xx; follow: Sluice follows (limit, cycles, RFC 9110 §15.4 method rewrite); refuse: 502."
            ) {
                config, value throws(ConfigError) in
                let text = try value.string()
                guard let policy = Configuration.RedirectPolicy(rawValue: text) else {
                    throw value.fail("expected pass, follow or refuse, not \(text)")
                }
                config.redirects.policy = policy
            },
            Key(
                path: "redirects.limit", type: "integer", defaultValue: "5",
                summary: "Most redirects followed per request."
            ) {
                config, value throws(ConfigError) in config.redirects.limit = try value.integer(in: 0...50)
            },
            Key(
                path: "log.level", type: "string", defaultValue: "info",
                summary: "trace, debug, info, notice, warning, error or critical."
            ) {
                config, value throws(ConfigError) in
                let text = try value.string()
                guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(text) else {
                    throw value.fail("unknown log level \(text)")
                }
                config.log.level = text
            },
            Key(path: "log.access", type: "bool", defaultValue: "true", summary: "One access-log line per exchange.") {
                config, value throws(ConfigError) in config.log.access = try value.bool()
            },
        ] + parentKeys + cacheKeys + adminKeys + tlsKeys + recordKeys + breakpointKeys + [
            Key(
                path: "defaults", type: "rule settings", defaultValue: "{}",
                summary: "`accept` and `strip_json_nulls` for requests no rule matches (see rules[].…)."
            ) {
                config, value throws(ConfigError) in config.defaults = try RuleParser.parseDefaults(value)
            },
            Key(
                path: "rules", type: "list of rules", defaultValue: "[]",
                summary:
                    "Ordered; the first rule whose `match` fits a request gives it validation, stripping and redirects."
            ) {
                config, value throws(ConfigError) in config.rules = try RuleParser.parseRules(value)
            },
        ]

    private static let sections: Set<String> = Set(
        keys.compactMap { key in
            key.path.split(separator: ".").count > 1 ? String(key.path.split(separator: ".")[0]) : nil
        })

    /// Parses YAML text; `file` only labels errors. Paths stay as written (see ``load(file:)``).
    public static func load(yaml: String, file: String? = nil) throws(ConfigError) -> Configuration {
        do {
            return try parse(yaml: yaml).configuration
        } catch var error {
            error.file = file
            throw error
        }
    }

    static func parse(yaml: String) throws(ConfigError) -> (configuration: Configuration, written: Set<String>) {
        let root: Node?
        do {
            // No implicit typing: each key's reader knows its type, and Yams' resolver would run a
            // regular expression (ICU) over every scalar.
            root = try Yams.compose(yaml: yaml, .basic)
        } catch {
            throw ConfigError(key: "", line: nil, message: "not valid YAML: \(error)")
        }
        var config = Configuration()
        guard let root else { return (config, []) }
        guard let mapping = root.mapping else {
            throw ConfigError(key: "", line: root.mark?.line, message: "the file must be a mapping of keys")
        }
        let byPath = Dictionary(uniqueKeysWithValues: keys.map { ($0.path, $0) })
        try walk(mapping, prefix: "", byPath: byPath, into: &config)
        let written = Set(
            Configuration.defaultedPathKeys.filter { key in
                let parts = key.split(separator: ".").map(String.init)
                return mapping[parts[0]]?.mapping?[parts[1]] != nil
            })
        return (config, written)
    }

    private static func walk(
        _ mapping: Node.Mapping, prefix: String, byPath: [String: Key], into config: inout Configuration
    ) throws(ConfigError) {
        var seen = Set<String>()
        for (keyNode, valueNode) in mapping {
            let name = keyNode.string ?? ""
            let path = prefix.isEmpty ? name : prefix + "." + name
            guard seen.insert(name).inserted else {
                throw ConfigError(key: path, line: keyNode.mark?.line, message: "duplicate key")
            }
            if prefix.isEmpty, sections.contains(name) {
                if valueNode.isNull {
                    continue
                }
                guard let nested = valueNode.mapping else {
                    throw ConfigError(key: path, line: valueNode.mark?.line, message: "expected a mapping")
                }
                try walk(nested, prefix: path, byPath: byPath, into: &config)
                continue
            }
            guard let key = byPath[path] else {
                let suggestion = suggest(path).map { " (did you mean \($0)?)" } ?? ""
                throw ConfigError(key: path, line: keyNode.mark?.line, message: "unknown key\(suggestion)")
            }
            try key.apply(&config, Value(node: valueNode, path: path))
        }
    }

    /// The documented key closest to `path` (edit distance at most 3), for "did you mean".
    private static func suggest(_ path: String) -> String? {
        let scored = keys.map { ($0.path, distance(Array(path.utf8), Array($0.path.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 3 else { return nil }
        return best.0
    }

    /// Edit distance, for "did you mean".
    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension Node {
    /// An empty value or a plain `null` / `~` (YAML's null forms; quoted text is a string).
    var isNull: Bool {
        guard let scalar else { return false }
        if scalar.string.isEmpty { return true }
        guard scalar.style == .plain || scalar.style == .any else { return false }
        return ["~", "null", "Null", "NULL"].contains(scalar.string)
    }
}
