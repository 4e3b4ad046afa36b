/// The `timeouts.*` keys of ``ConfigLoader/keys``.
extension ConfigLoader {
    /// `timeouts.*`: the client's and the origin's, and the shutdown's grace.
    static let timeoutKeys: [Key] = [
        Key(
            path: "timeouts.client_header", type: "duration", defaultValue: "10s",
            summary:
                "Time to send a request's header section, and a new connection's wait for its first byte (slowloris guard); then 408 (a connection that sent nothing is closed)."
        ) {
            config, value throws(ConfigError) in config.timeouts.clientHeader = try value.milliseconds()
        },
        Key(
            path: "timeouts.client_idle", type: "duration", defaultValue: "60s",
            summary: "Keep-alive idle time between requests."
        ) {
            config, value throws(ConfigError) in config.timeouts.clientIdle = try value.milliseconds()
        },
        Key(
            path: "timeouts.client_body", type: "duration", defaultValue: "30s",
            summary: "Longest stall while a client sends a body or does not read a response."
        ) {
            config, value throws(ConfigError) in config.timeouts.clientBody = try value.milliseconds()
        },
        Key(
            path: "timeouts.upstream_connect", type: "duration", defaultValue: "10s",
            summary: "Connecting to an origin (TCP + TLS); then 504."
        ) {
            config, value throws(ConfigError) in config.timeouts.upstreamConnect = try value.milliseconds()
        },
        Key(
            path: "timeouts.upstream_response", type: "duration", defaultValue: "60s",
            summary:
                "From the request sent (each request-body piece starts it over: an upload that moves never times out) to response headers; then 504."
        ) {
            config, value throws(ConfigError) in config.timeouts.upstreamResponse = try value.milliseconds()
        },
        Key(
            path: "timeouts.upstream_idle", type: "duration", defaultValue: "60s",
            summary:
                "Longest stall in an origin's response body, after its head (through libcurl: parent proxies, HTTP/2 origins, from the request on); then the client connection is closed."
        ) {
            config, value throws(ConfigError) in config.timeouts.upstreamIdle = try value.milliseconds()
        },
        Key(
            path: "timeouts.upstream_continue", type: "duration", defaultValue: "1s",
            summary:
                "How long a request body whose client sent Expect: 100-continue waits for the origin's 100 Continue or final answer before it goes anyway (RFC 9110 §10.1.1); 0 = Sluice answers the expectation itself and forwards none."
        ) {
            config, value throws(ConfigError) in config.timeouts.upstreamContinue = try value.milliseconds()
        },
        Key(
            path: "timeouts.tunnel_idle", type: "duration", defaultValue: "300s",
            summary: "CONNECT tunnel idle time in both directions."
        ) {
            config, value throws(ConfigError) in config.timeouts.tunnelIdle = try value.milliseconds()
        },
        Key(
            path: "timeouts.shutdown_grace", type: "duration", defaultValue: "10s",
            summary: "How long SIGTERM/SIGINT wait for in-flight exchanges."
        ) {
            config, value throws(ConfigError) in config.timeouts.shutdownGrace = try value.milliseconds()
        },
    ]
}
