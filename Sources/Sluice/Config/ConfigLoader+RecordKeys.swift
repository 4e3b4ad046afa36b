/// The `record.*` and `replay.*` keys of ``ConfigLoader/keys``.
extension ConfigLoader {
    static let recordKeys: [Key] = [
        Key(
            path: "record.file", type: "path", defaultValue: "none",
            summary:
                "Record every exchange that passes (request and response, bodies up to max_body, timings) into this SQLite recording; `sluice serve --record FILE` says the same."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard !text.isEmpty else { throw value.fail("expected a file path") }
            config.record.file = text
        },
        Key(
            path: "record.match", type: "list of host[/path] glob", defaultValue: "[] (all)",
            summary: "Record only these requests, e.g. `[api.example.com/v1/**, \"*.internal\"]`."
        ) {
            config, value throws(ConfigError) in
            config.record.match = try value.list().map { item throws(ConfigError) in
                switch URLPattern.parse(try item.string()) {
                case .success(let pattern): return pattern
                case .failure(let error): throw item.fail(error.message)
                }
            }
        },
        Key(
            path: "record.keep_credentials", type: "bool", defaultValue: "false",
            summary: "Keep Authorization, Proxy-Authorization, Cookie and Set-Cookie values (redacted otherwise)."
        ) {
            config, value throws(ConfigError) in config.record.keepCredentials = try value.bool()
        },
        Key(
            path: "record.max_body", type: "size", defaultValue: "1MiB",
            summary: "Most bytes kept of each request and response body; longer ones are kept cut and not replayed."
        ) {
            config, value throws(ConfigError) in
            let size = try value.byteSize()
            guard size <= 256 << 20 else { throw value.fail("at most 256MiB") }
            config.record.maxBody = size
        },
        Key(
            path: "record.max_size", type: "size", defaultValue: "0 (the disk)",
            summary: "The most the recording file grows to; then recording stops, what was written stays readable."
        ) {
            config, value throws(ConfigError) in config.record.maxSize = try value.byteSize()
        },
        Key(
            path: "replay.file", type: "path", defaultValue: "none",
            summary:
                "Answer from this recording (`sluice serve --replay FILE`): method, URL (query order ignored), body digest and match_headers must agree; repeats are served in recorded order, then the last again."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard !text.isEmpty else { throw value.fail("expected a file path") }
            config.replay.file = text
        },
        Key(
            path: "replay.on_miss", type: "fail | forward", defaultValue: "fail",
            summary:
                "A request the recording does not hold: a 504 problem naming the closest recorded request, or forwarded."
        ) {
            config, value throws(ConfigError) in
            let text = try value.string()
            guard let choice = Configuration.Replay.OnMiss(rawValue: text) else {
                throw value.fail("expected fail or forward, not \(text)")
            }
            config.replay.onMiss = choice
        },
        Key(
            path: "replay.match_headers", type: "list of field name", defaultValue: "[]",
            summary: "Request header fields whose values must match as well, e.g. `[Accept, X-Api-Version]`."
        ) {
            config, value throws(ConfigError) in
            config.replay.matchHeaders = try value.list().map { item throws(ConfigError) in
                let name = try item.string()
                guard !name.isEmpty, name.utf8.allSatisfy(RequestParser.isTokenByte) else {
                    throw item.fail("expected a header field name")
                }
                return name.lowercased()
            }
        },
        Key(
            path: "replay.match_body", type: "bool", defaultValue: "true",
            summary: "Whether the request body (its SHA-256) must match."
        ) {
            config, value throws(ConfigError) in config.replay.matchBody = try value.bool()
        },
    ]
}
