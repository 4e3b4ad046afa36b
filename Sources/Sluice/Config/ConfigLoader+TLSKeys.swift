/// The `tls.*` keys of ``ConfigLoader/keys``.
extension ConfigLoader {
    static let tlsKeys: [Key] = [
        Key(
            path: "tls.intercept", type: "list of host glob[:port]", defaultValue: "[]",
            summary:
                "Hosts whose CONNECT tunnels are intercepted (TLS terminated with the local CA); none by default. `host:port` intercepts that port only, and lets CONNECT reach it."
        ) {
            config, value throws(ConfigError) in
            config.tls.intercept = try value.list().map { item throws(ConfigError) in
                let text = try item.string()
                switch InterceptTarget.parse(text) {
                case .success(let target): return target
                case .failure(let error): throw item.fail("bad host or port \"\(text)\": \(error.message)")
                }
            }
        },
        Key(
            path: "tls.passthrough", type: "list of host glob", defaultValue: "[]",
            summary: "Hosts never intercepted (wins over tls.intercept and rules' intercept)."
        ) {
            config, value throws(ConfigError) in config.tls.passthrough = try hostGlobs(value)
        },
        Key(
            path: "tls.ca_cert", type: "path", defaultValue: "sluice-ca.pem",
            summary: "The local CA's certificate (PEM); `sluice ca export` prints it."
        ) {
            config, value throws(ConfigError) in config.tls.caCert = try nonEmptyPath(value)
        },
        Key(
            path: "tls.ca_key", type: "path", defaultValue: "sluice-ca.key",
            summary: "The local CA's private key (PEM, mode 0600; serve refuses a key others can read)."
        ) {
            config, value throws(ConfigError) in config.tls.caKey = try nonEmptyPath(value)
        },
        Key(
            path: "tls.passthrough_after_failure", type: "duration", defaultValue: "10m",
            summary: "After a client refuses the certificate, its tunnels to that host are blind this long; 0 = off."
        ) {
            config, value throws(ConfigError) in config.tls.passthroughAfterFailure = try value.milliseconds()
        },
        Key(
            path: "tls.leaf_cache", type: "integer", defaultValue: "1000",
            summary: "Leaf certificates kept in memory (one per host name)."
        ) {
            config, value throws(ConfigError) in config.tls.leafCache = try value.integer(in: 1...1_000_000)
        },
        Key(
            path: "tls.handshake_timeout", type: "duration", defaultValue: "10s",
            summary: "Longest TLS handshake an intercepted client may take."
        ) {
            config, value throws(ConfigError) in config.tls.handshakeTimeout = try value.milliseconds()
        },
        Key(
            path: "tls.http2", type: "bool", defaultValue: "true",
            summary:
                "Offer h2 (ALPN) to intercepted clients: HTTP/2 and gRPC clients are served, each stream an ordinary exchange."
        ) {
            config, value throws(ConfigError) in config.tls.http2 = try value.bool()
        },
        Key(
            path: "tls.http2_max_streams", type: "integer", defaultValue: "100",
            summary: "Streams one intercepted HTTP/2 connection may run at once (SETTINGS_MAX_CONCURRENT_STREAMS)."
        ) {
            config, value throws(ConfigError) in config.tls.http2MaxStreams = try value.integer(in: 1...10_000)
        },
    ]

    private static func hostGlobs(_ value: Value) throws(ConfigError) -> [Glob] {
        try value.list().map { item throws(ConfigError) in
            let text = try item.string()
            switch Glob.parse(text, kind: .host) {
            case .success(let glob): return glob
            case .failure(let error): throw item.fail("bad glob \"\(text)\": \(error.message)")
            }
        }
    }

    private static func nonEmptyPath(_ value: Value) throws(ConfigError) -> String {
        let text = try value.string()
        guard !text.isEmpty else { throw value.fail("expected a file path") }
        return text
    }
}
