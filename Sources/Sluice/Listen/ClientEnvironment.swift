import Logging

/// What a ``ClientConnection`` needs from the proxy, as one value instead of reaching through
/// the server for each: the exchanges' environment (loop, rules, limits, policy, stats, date),
/// the client timeouts and TLS settings, and the few things only the server does.
struct ClientEnvironment {
    /// What every exchange on the connection gets.
    let exchanges: ExchangeEnvironment
    let timeouts: Configuration.Timeouts
    let tls: Configuration.TLS
    /// Terminates TLS for intercepted hosts; `nil` when nothing is intercepted.
    let interceptor: Interceptor?
    /// `tunnel_plain_http: serve`: plain HTTP inside a CONNECT is served here.
    let servesPlainHTTP: Bool
    let logger: Logger
    /// Writes an access-log line.
    let log: (ExchangeRecord) -> Void
    /// What a tunnel starting now needs.
    let tunnels: () -> TunnelEnvironment
    /// Told once, when the connection closed.
    let closed: (ClientConnection) -> Void
}

extension ProxyServer {
    /// The environment of a client connection accepted now.
    var clientEnvironment: ClientEnvironment {
        ClientEnvironment(
            exchanges: environment, timeouts: configuration.timeouts, tls: configuration.tls, interceptor: interceptor,
            servesPlainHTTP: configuration.tunnelPlainHTTP == .serve, logger: logger,
            log: { [unowned self] in self.log($0) },
            tunnels: { [unowned self] in self.tunnelEnvironment },
            closed: { [unowned self] in self.connectionDidClose($0) })
    }
}
