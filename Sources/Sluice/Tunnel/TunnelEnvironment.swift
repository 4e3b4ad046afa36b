import EventIO
import TLS

/// What a ``Tunnel`` needs from the proxy, as one value made when the tunnel starts (the rules
/// and parents in force then), instead of reaching through the server for each.
struct TunnelEnvironment {
    let loop: EventLoop
    let resolver: DNSResolver
    /// `timeouts.tunnel_idle` and `timeouts.upstream_connect`, in milliseconds.
    let idleLimit: Int
    let connectLimit: Int
    /// Refuses origins that are this proxy or a denied network (checked on the connected address).
    let targetGuard: TargetGuard
    /// Parent proxies, and the TLS context for `https://` ones.
    let parents: ParentRouting
    let parentTLS: TLSClientContext?
    let rules: RuleBook
    /// `tunnel_plain_http: serve` looks at the client's first bytes; `relay` does not.
    let servesPlainHTTP: Bool
    let stats: Stats
    /// The `Date` value for a problem answer now.
    let date: () -> String
    /// Writes the tunnel's access-log line.
    let log: (ExchangeRecord) -> Void
}

extension ProxyServer {
    /// The environment of a tunnel starting now.
    var tunnelEnvironment: TunnelEnvironment {
        TunnelEnvironment(
            loop: loop, resolver: resolver, idleLimit: configuration.timeouts.tunnelIdle,
            connectLimit: configuration.timeouts.upstreamConnect, targetGuard: session.targetGuard,
            parents: environment.parents, parentTLS: environment.parentTLS, rules: environment.rules,
            servesPlainHTTP: configuration.tunnelPlainHTTP == .serve, stats: stats,
            date: { [date] in date.now }, log: { [unowned self] in self.log($0) })
    }
}
