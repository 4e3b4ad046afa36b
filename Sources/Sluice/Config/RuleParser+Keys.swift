/// The keys of `rules:` and `defaults:`, documented once (`check-config --reference`).
extension RuleParser {
    /// The keys a rule may hold, documented once (they appear in `check-config --reference`).
    static let ruleKeys: [(path: String, type: String, defaultValue: String, summary: String)] = [
        ("rules[].name", "string", "rule N", "Name reported in problems, `Sluice-Validation` and logs."),
        (
            "rules[].match.host", "glob", "any",
            "Host glob, case-insensitive: `api.example.com`, `*.example.com` (`*` spans dots)."
        ),
        (
            "rules[].match.path", "glob", "any",
            "Path glob (query ignored): `*` within a segment, `**` across segments; `/v1/**` also matches `/v1`."
        ),
        ("rules[].match.methods", "list of method", "any", "e.g. `[GET, POST]`."),
        (
            "rules[].accept.status", "list of code or range", "[\"200-299\"]",
            "Acceptable status codes: `200`, `\"200-299\"`, `\"2xx\"`. 3xx passed back and 304 to a conditional request always pass."
        ),
        (
            "rules[].accept.content_types", "list of media range", "any",
            "Acceptable types: `application/json`, `text/*`, `application/*+json`, `*/*`; parameters (`; charset=utf-8`) are ignored, type and subtype compared."
        ),
        (
            "rules[].accept.on_reject", "enforce | report", "enforce",
            "enforce: cancel at the headers and answer 502 problem; report: pass with `Sluice-Validation: failed`."
        ),
        (
            "rules[].strip_json_nulls", "false | true | all", "false",
            "Remove null-valued object members from JSON bodies; `all` also drops null array elements."
        ),
        (
            "rules[].contract.openapi", "path", "none",
            "An OpenAPI 3.0, 3.1 or 3.2 (or Swagger 2.0) document (YAML or JSON, relative to the config file): responses are checked against its operations."
        ),
        (
            "rules[].contract.schema", "path", "none",
            "A JSON Schema (2020-12 unless its $schema says draft-04/06/07) for the rule's 2xx JSON bodies."
        ),
        (
            "rules[].contract.on_violation", "enforce | report", "report",
            "enforce: hold the body (up to limits.max_transform_body) and answer 502 contract-violation; report: pass and record."
        ),
        ("rules[].contract.requests", "off | report | enforce", "off", "Check requests too; enforce answers 400."),
        (
            "rules[].contract.undocumented", "pass | report | enforce", "report",
            "An operation, status or media type the document does not describe."
        ),
        ("rules[].contract.base_path", "path", "first servers[] path", "Prefix removed before matching paths."),
        ("rules[].contract.refs", "map of URI to path", "{}", "Local files for http(s) $refs (never fetched)."),
        ("rules[].contract.formats", "annotate | assert", "annotate", "Whether `format` is checked."),
        ("rules[].redirects", "pass | follow | refuse", "redirects.policy", "Redirect policy for matching requests."),
        (
            "rules[].cache.store", "bool", "true",
            "`false`: matching responses are never stored (`cache: false` says the same)."
        ),
        (
            "rules[].cache.ttl", "duration", "none",
            "Freshness for responses without `s-maxage`, `max-age` or `Expires` (like Squid's refresh_pattern); `Cache-Status` says `detail=ttl-override`."
        ),
        (
            "defaults.accept", "accept block", "none",
            "Validation for requests no rule matches (absent: every response passes)."
        ),
        ("defaults.strip_json_nulls", "false | true | all", "false", "Null stripping for requests no rule matches."),
        ("defaults.cache", "cache block", "none", "`store` and `ttl` for requests no rule matches."),
        (
            "rules[].intercept", "bool", "false",
            "Intercept HTTPS to the rule's hosts (needs `match.host`; `tls.passthrough` still wins)."
        ),
        (
            "rules[].tls.pins", "list of sha256//BASE64", "[]",
            "Public-key pins of the origin (CURLOPT_PINNEDPUBLICKEY), checked on every new connection."
        ),
        ("rules[].tls.ca_file", "path", "system store", "PEM CA certificates trusted for the rule's origins."),
        (
            "rules[].tls.verify", "bool", "true",
            "false accepts any certificate (warned at start; never allowed in defaults)."
        ),
        ("rules[].tls.min_version", "1.2 | 1.3", "libcurl's", "Lowest TLS version offered to the origin."),
        (
            "rules[].tls.client_certificate", "path", "none",
            "PEM client certificate (and chain) sent to an origin that asks for one (mutual TLS); checked at start."
        ),
        ("rules[].tls.client_key", "path", "the certificate's file", "PEM private key of tls.client_certificate."),
        (
            "defaults.tls", "tls block", "none",
            "`pins`, `ca_file`, `min_version`, `client_certificate`, `client_key` for requests no rule matches."
        ),
        (
            "rules[].respond.status", "code", "200",
            "Map local: matching requests get this answer from Sluice; nothing goes upstream, nothing is cached."
        ),
        (
            "rules[].respond.headers", "map of name to value", "{}",
            "Fields of the answer (`Content-Type` defaults from the file's extension); Content-Length, Date and Via are Sluice's."
        ),
        ("rules[].respond.body", "string", "empty", "The body, as text."),
        (
            "rules[].respond.file", "path", "none",
            "The body from a file (relative to the config file), read per request, at most limits.max_transform_body; gone: 502."
        ),
        (
            "rules[].upstream", "URL or {url, host}", "none",
            "Map remote: send matching requests (plain or intercepted) to this origin; its path is put before the request's."
        ),
        (
            "rules[].upstream.host", "rewrite | keep", "rewrite",
            "`Host` names the new origin (rewrite) or stays the client's (keep)."
        ),
        (
            "rules[].rewrite.request", "{set, add, remove}", "none",
            "Header fields changed before the request goes upstream: `set: {Name: value}`, `add: {Name: value}`, `remove: [Name]`."
        ),
        (
            "rules[].rewrite.response", "{set, add, remove}", "none",
            "Header fields of the origin's response changed before validation and the cache (and so in what is stored)."
        ),
        (
            "rules[].rewrite.response.json_patch", "list of RFC 6902 operations", "none",
            "`{op: add|remove|replace|move|copy|test, path: /pointer, value | from}` applied in place to JSON response bodies at delivery (held like null stripping; all or nothing)."
        ),
        ("defaults.rewrite", "rewrite block", "none", "Header rewriting for requests no rule matches."),
        (
            "rules[].faults.latency", "duration or range", "none",
            "Delay before a matching request is served, drawn evenly from `200ms..800ms` (or fixed: `250ms`)."
        ),
        (
            "rules[].faults.status", "{code, retry_after, rate}", "none",
            "Answer `code` (with `Retry-After`) instead of the origin for a share of requests; the problem body says it was injected."
        ),
        (
            "rules[].faults.reset", "{rate, after_bytes}", "none",
            "Reset the client connection after `after_bytes` of the response body, for a share of requests."
        ),
        (
            "rules[].faults.timeout", "{rate}", "none",
            "Hold a share of requests unanswered until the client gives up (or timeouts.upstream_response: 504)."
        ),
        ("rules[].faults.seed", "integer", "random", "Makes the draws reproducible run after run."),
        (
            "rules[].faults.bandwidth", "rate", "none",
            "Send matching responses at `256kbit`, `2mbit` or `64KiB` a second (the source pauses, nothing is buffered whole)."
        ),
    ]
}
